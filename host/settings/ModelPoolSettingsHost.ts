// The local models' settings as the settings screen reads and changes them (renderer/settings/
// ModelPoolSection.tsx): settings.json's, with the command line's on top for this run. A change
// takes effect at once: the pool reads them at each scan, load and release (host/supervisor/localModelPool.ts).
import fs from "node:fs/promises";
import os from "node:os";
import type { ModelPoolSettingName, ModelPoolSettings, ModelPoolSettingsView } from "../../contract/modelPoolSettings.js";
import { KvaultError } from "../../engine/index.js";
import { modelPoolSettingProblem } from "./readModelPoolSettings.js";
import type { SettingsFile } from "./SettingsFile.js";
import { SettingFromCommandLineError } from "./settingsErrors.js";

/** A model pool setting that breaks its rule (the numbers are in the message), or a folder that is not there. */
export class ModelPoolSettingError extends KvaultError {
    readonly code = "invalid_model_pool_setting";
}

/** The flag of each setting, as the screen names one given for this run. */
export const modelPoolSettingFlags: Readonly<Record<ModelPoolSettingName, string>> = Object.freeze({
    modelIdleSeconds: "--model-idle-seconds",
    modelsMemoryMb: "--models-memory-mb",
    modelsFolders: "--models-folder"
});

const MIB = 1024 * 1024;

export class ModelPoolSettingsHost {
    constructor(
        private readonly file: SettingsFile,
        /** The values given on the command line for this run (the headless server's flags); none in the app. */
        private readonly fromCommandLine: Partial<ModelPoolSettings> = {}
    ) {}

    /** What the pool runs with now. */
    running(): ModelPoolSettings {
        return Object.freeze({ ...this.file.current.modelPool, ...this.fromCommandLine });
    }

    view(): ModelPoolSettingsView {
        const given = Object.keys(this.fromCommandLine) as ModelPoolSettingName[];
        return {
            saved: this.file.current.modelPool,
            running: this.running(),
            fromCommandLine: Object.fromEntries(given.map((name) => [name, modelPoolSettingFlags[name]])),
            machineMemoryMb: Math.floor(os.totalmem() / MIB)
        };
    }

    /** Saves `change` over the file's settings; refuses, saving nothing, a value against its rule, a folder that is not there, or one the command line set. */
    async set(change: Partial<ModelPoolSettings>): Promise<ModelPoolSettingsView> {
        for (const [name, value] of Object.entries(change) as [ModelPoolSettingName, unknown][]) {
            if (value === undefined) {
                continue;
            }
            const flag = this.fromCommandLine[name] === undefined ? undefined : modelPoolSettingFlags[name];
            if (flag !== undefined) {
                throw new SettingFromCommandLineError(
                    `${name} is given on the command line for this run (${flag}); restart the server without ${flag} to change it here.`
                );
            }
            const problem = modelPoolSettingProblem(name, value);
            if (problem !== undefined) {
                throw new ModelPoolSettingError(problem);
            }
        }
        for (const folder of change.modelsFolders ?? []) {
            const stat = await fs.stat(folder).catch(() => undefined);
            if (stat?.isDirectory() !== true) {
                throw new ModelPoolSettingError(
                    `The model folder ${folder} ${stat === undefined ? "does not exist or cannot be read" : "is a file, not a folder"}; choose a folder that holds GGUF files.`
                );
            }
        }
        const defined = Object.fromEntries(Object.entries(change).filter(([, value]) => value !== undefined)) as Partial<ModelPoolSettings>;
        await this.file.update((current) => ({
            ...current,
            modelPool: Object.freeze({
                ...current.modelPool,
                ...defined,
                modelsFolders: Object.freeze([...(defined.modelsFolders ?? current.modelPool.modelsFolders)])
            })
        }));
        return this.view();
    }
}
