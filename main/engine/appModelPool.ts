// The desktop app's local models beside its engine (host/supervisor/localModelPool.ts, the headless
// server's too): each model's engine in an Electron utilityProcess of its own (the spawner main
// passes), on the settings' engine settings and the app's KV-on-disk key, named as the app names its
// own model. No electron import, so that it reads and is tested like the headless server's wiring.
import type { ModelPoolSettings } from "../../contract/modelPoolSettings.js";
import type { EngineSettings } from "../../contract/settings.js";
import { engineDefaults, type EngineConfigInput } from "../../engine/index.js";
import type { ModelInspector } from "../../host/models/inspectModelInChild.js";
import type { ModelRoots } from "../../host/models/modelRoots.js";
import { engineConfigFor } from "../../host/settings/engineConfigFor.js";
import type { EnginePool } from "../../host/supervisor/EnginePool.js";
import type { EngineProcessSpawner } from "../../host/supervisor/EngineProcessSpawner.js";
import { localModelPool } from "../../host/supervisor/localModelPool.js";
import { SHUTDOWN_GRACE_MS, type StartedEngine } from "./startEngine.js";

export interface AppModelPoolParts {
    readonly started: StartedEngine;
    /** settings.json's engine settings now: each model loads with them, as the app's own engine restarts with them. */
    readonly settings: () => EngineSettings;
    readonly poolSettings: () => ModelPoolSettings;
    /** utilityProcessSpawner in the app (a test's fork stand-in elsewhere). */
    readonly spawner: EngineProcessSpawner;
    /** The app's inspector in a process of its own (utilityInspectionSpawner). */
    readonly inspectModel: ModelInspector;
    /** What the app's engine gets beside its settings (its KV-on-disk key from the keychain). */
    readonly extraConfig?: Partial<Omit<EngineConfigInput, "modelPath">>;
    readonly log: (line: string) => void;
    readonly roots?: (folders: readonly string[]) => ModelRoots;
}

export function appModelPool(parts: AppModelPoolParts): EnginePool {
    const { started } = parts;
    return localModelPool({
        supervisor: started.supervisor,
        primaryId: () => started.modelId(),
        settings: parts.settings,
        poolSettings: parts.poolSettings,
        configFor: (settings) => ({ ...engineConfigFor(settings), ...parts.extraConfig }),
        mode: engineDefaults.mode,
        inspectModel: parts.inspectModel,
        spawner: parts.spawner,
        supervisorOptions: { shutdownGraceMs: SHUTDOWN_GRACE_MS },
        log: parts.log,
        roots: parts.roots
    });
}
