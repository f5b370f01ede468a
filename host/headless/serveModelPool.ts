// The headless server's other local models (host/supervisor/EnginePool.ts): the GGUF files found in
// LM Studio's, Ollama's and Hugging Face's folders and in --models-folder, each loaded in place by
// the first request whose `model` names it, on the engine settings this run started with.
import fs from "node:fs/promises";
import os from "node:os";
import type { EngineSettings } from "../../contract/settings.js";
import type { EngineConfigInput } from "../../engine/index.js";
import { findModelsOnDisk, type DiskModel } from "../models/findModelsOnDisk.js";
import type { ModelInspector } from "../models/inspectModelInChild.js";
import { defaultModelRoots, type ModelRoots } from "../models/modelRoots.js";
import { planModelLoad, planRunningModel } from "../models/planModelLoad.js";
import { EnginePool } from "../supervisor/EnginePool.js";
import { EngineSupervisor } from "../supervisor/EngineSupervisor.js";
import { serveModelId } from "./resolveServeModel.js";
import type { ServeOptions } from "./serveOptions.js";

/** A scan is reused this long: every request naming a model asks whether it exists, and a scan reads folders. */
export const DISK_SCAN_REUSE_MS = 2_000;

export interface ServeModelPoolParts {
    readonly given: ServeOptions;
    /** The server's own engine. */
    readonly supervisor: EngineSupervisor;
    /** The engine settings in force now (the file's, the command line's on top). */
    readonly settings: () => EngineSettings;
    readonly configFor: (settings: EngineSettings) => Omit<EngineConfigInput, "modelPath">;
    /** The host's one cached, child-process inspector: a found file is inspected before it is planned and loaded. */
    readonly inspectModel: ModelInspector;
    readonly log: (line: string) => void;
    /** Where to look; this user's home and environment by default. */
    readonly roots?: ModelRoots;
}

export function serveModelPool(parts: ServeModelPoolParts): EnginePool {
    const { given, supervisor, settings, inspectModel, log } = parts;
    const roots = parts.roots ?? defaultModelRoots(given.modelsFolders);
    let scan: { readonly at: number; readonly models: Promise<readonly DiskModel[]> } | undefined;
    const available = (): Promise<readonly DiskModel[]> => {
        if (scan === undefined || Date.now() - scan.at > DISK_SCAN_REUSE_MS) {
            const models = findModelsOnDisk(roots).then((found) => {
                if (found.truncated !== undefined) {
                    log(`Models on disk: ${found.truncated}.`);
                }
                return found.models;
            });
            scan = { at: Date.now(), models };
        }
        return scan.models;
    };
    return new EnginePool({
        primary: { engine: supervisor, id: () => serveModelId(supervisor.info.modelPath) },
        available,
        plan: async (modelPath) => {
            const running = settings();
            const facts = await inspectModel(modelPath, { contextSize: running.contextSize, sequences: running.decodeSequences });
            const gpuBackend = supervisor.info.compute.devices.some((device) => device.type === "gpu");
            return planModelLoad(running, facts, given.mode, gpuBackend);
        },
        // the server's own engine says what it holds: no second inspection of its file
        planRunning: async (engine) => planRunningModel(engine.info, (await fs.stat(engine.info.modelPath)).size),
        start: (modelPath) => EngineSupervisor.start({ modelPath, ...parts.configFor(settings()) }, { log, inspectModel }),
        budgetBytes: given.modelsMemoryMb === undefined ? os.totalmem() : given.modelsMemoryMb * 1024 * 1024,
        idleMs: given.modelIdleSeconds * 1000,
        log
    });
}
