// The local models beside a host's own engine (EnginePool.ts), wired the same for both hosts: the
// GGUF files found in LM Studio's, Ollama's and Hugging Face's folders and in the settings' model
// folders, each loaded in place by the first turn or request that names it, on the engine settings
// in force, in an engine process the platform spawns (a forked Node process for the headless
// server, an Electron utilityProcess for the desktop app).
import fs from "node:fs/promises";
import os from "node:os";
import type { ModelPoolSettings } from "../../contract/modelPoolSettings.js";
import type { EngineSettings } from "../../contract/settings.js";
import type { EngineConfigInput } from "../../engine/index.js";
import { findModelsOnDisk, type DiskModel } from "../models/findModelsOnDisk.js";
import type { ModelInspector } from "../models/inspectModelInChild.js";
import { defaultModelRoots, type ModelRoots } from "../models/modelRoots.js";
import { planModelLoad, planRunningModel } from "../models/planModelLoad.js";
import { EnginePool } from "./EnginePool.js";
import type { EngineProcessSpawner } from "./EngineProcessSpawner.js";
import { EngineSupervisor } from "./EngineSupervisor.js";
import type { EngineSupervisorOptions } from "./supervisorOptions.js";

/** A scan is reused this long: every request naming a model asks whether it exists, and a scan reads folders. */
export const DISK_SCAN_REUSE_MS = 2_000;

const MIB = 1024 * 1024;

export interface LocalModelPoolParts {
    /** The host's own engine: listed first, counted in the budget, never unloaded. */
    readonly supervisor: EngineSupervisor;
    /** The host's own model's id, as `/v1/models` names it (it follows a model switch). */
    readonly primaryId: () => string;
    /** The engine settings in force now; each model loads with them. */
    readonly settings: () => EngineSettings;
    /** The pool's settings in force now (settings.json's, the command line's on top); read at each scan, load and release. */
    readonly poolSettings: () => ModelPoolSettings;
    readonly configFor: (settings: EngineSettings) => Omit<EngineConfigInput, "modelPath">;
    /** The split or unified mode the host's engines are asked for. */
    readonly mode: "split" | "unified";
    /** The host's one cached, child-process inspector: a found file is inspected before it is planned and loaded. */
    readonly inspectModel: ModelInspector;
    /** How the platform starts an engine process; a forked Node process when absent. */
    readonly spawner?: EngineProcessSpawner;
    /** The rest of the supervisor's options for each model's engine (its shutdown grace, say). */
    readonly supervisorOptions?: Omit<EngineSupervisorOptions, "spawner" | "inspectModel" | "log">;
    readonly log: (line: string) => void;
    /** Where to look besides the settings' folders; this user's home and environment by default. */
    readonly roots?: (folders: readonly string[]) => ModelRoots;
}

export function localModelPool(parts: LocalModelPoolParts): EnginePool {
    const { supervisor, settings, poolSettings, inspectModel, log } = parts;
    const rootsFor = parts.roots ?? defaultModelRoots;
    let scan: { readonly at: number; readonly folders: string; readonly models: Promise<readonly DiskModel[]> } | undefined;
    const available = (): Promise<readonly DiskModel[]> => {
        const folders = poolSettings().modelsFolders;
        const key = JSON.stringify(folders);
        if (scan === undefined || scan.folders !== key || Date.now() - scan.at > DISK_SCAN_REUSE_MS) {
            const models = findModelsOnDisk(rootsFor(folders)).then((found) => {
                if (found.truncated !== undefined) {
                    log(`Models on disk: ${found.truncated}.`);
                }
                return found.models;
            });
            scan = { at: Date.now(), folders: key, models };
        }
        return scan.models;
    };
    return new EnginePool({
        primary: { engine: supervisor, id: parts.primaryId },
        available,
        plan: async (modelPath) => {
            const running = settings();
            const facts = await inspectModel(modelPath, { contextSize: running.contextSize, sequences: running.decodeSequences });
            const gpuBackend = supervisor.info.compute.devices.some((device) => device.type === "gpu");
            return planModelLoad(running, facts, parts.mode, gpuBackend);
        },
        // the host's own engine says what it holds: no second inspection of its file
        planRunning: async (engine) => planRunningModel(engine.info, (await fs.stat(engine.info.modelPath)).size),
        start: (modelPath) =>
            EngineSupervisor.start(
                { modelPath, ...parts.configFor(settings()) },
                { ...parts.supervisorOptions, spawner: parts.spawner, inspectModel, log }
            ),
        budgetBytes: () => {
            const budgetMb = poolSettings().modelsMemoryMb;
            return budgetMb === null ? os.totalmem() : budgetMb * MIB;
        },
        idleMs: () => poolSettings().modelIdleSeconds * 1000,
        log
    });
}
