// The headless server's local models (host/supervisor/localModelPool.ts, the desktop app's too): named
// as the server names its own model, each engine a forked Node process, on the pool settings createHost
// gives (settings.json's, with --model-idle-seconds, --models-memory-mb and --models-folder on top).
import type { ModelPoolSettings } from "../../contract/modelPoolSettings.js";
import type { EngineSettings } from "../../contract/settings.js";
import type { EngineConfigInput } from "../../engine/index.js";
import type { ModelInspector } from "../models/inspectModelInChild.js";
import type { ModelRoots } from "../models/modelRoots.js";
import type { EnginePool } from "../supervisor/EnginePool.js";
import type { EngineSupervisor } from "../supervisor/EngineSupervisor.js";
import { localModelPool } from "../supervisor/localModelPool.js";
import { serveModelId } from "./resolveServeModel.js";
import type { ServeOptions } from "./serveOptions.js";

export interface ServeModelPoolParts {
    readonly given: Pick<ServeOptions, "mode">;
    /** The server's own engine. */
    readonly supervisor: EngineSupervisor;
    /** The engine settings in force now (the file's, the command line's on top). */
    readonly settings: () => EngineSettings;
    /** The pool settings in force now: settings.json's (the settings screen may change them) with the command line's on top. */
    readonly poolSettings: () => ModelPoolSettings;
    readonly configFor: (settings: EngineSettings) => Omit<EngineConfigInput, "modelPath">;
    /** The host's one cached, child-process inspector: a found file is inspected before it is planned and loaded. */
    readonly inspectModel: ModelInspector;
    readonly log: (line: string) => void;
    /** Where to look; this user's home and environment by default. */
    readonly roots?: (folders: readonly string[]) => ModelRoots;
}

export function serveModelPool(parts: ServeModelPoolParts): EnginePool {
    const { given, supervisor } = parts;
    return localModelPool({
        ...parts,
        primaryId: () => serveModelId(supervisor.info.modelPath),
        mode: given.mode
    });
}
