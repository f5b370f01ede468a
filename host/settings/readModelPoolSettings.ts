// The local models' settings (contract/modelPoolSettings.ts) as settings.json holds them: each
// usable field kept, each other one back to its default with a line saying so, as the rest of
// the file is read (parseSettingsFile.ts). The settings screen's change is checked by the same rules.
import path from "node:path";
import {
    modelPoolSettingDefaults,
    modelPoolSettingLimits,
    type ModelPoolSettingName,
    type ModelPoolSettings
} from "../../contract/modelPoolSettings.js";

/** Why `value` cannot be setting `name`, with the numbers; undefined when it can. */
export function modelPoolSettingProblem(name: ModelPoolSettingName, value: unknown): string | undefined {
    switch (name) {
        case "modelIdleSeconds":
        case "modelsMemoryMb": {
            const { min, max } = modelPoolSettingLimits[name];
            if (name === "modelsMemoryMb" && value === null) {
                return undefined;
            }
            return typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max
                ? undefined
                : `${name} is ${describe(value)}; it must be a whole number from ${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}${name === "modelsMemoryMb" ? " (MiB), or null for the machine's RAM" : " (seconds)"}.`;
        }
        case "modelsFolders": {
            const { maxFolders, maxFolderChars } = modelPoolSettingLimits;
            if (!Array.isArray(value)) {
                return `modelsFolders is ${describe(value)}, not a list of folders.`;
            }
            if (value.length > maxFolders) {
                return `modelsFolders lists ${value.length.toLocaleString("en-US")} folders; at most ${maxFolders} are searched. Remove some.`;
            }
            const bad = value.findIndex(
                (folder) => typeof folder !== "string" || folder.length > maxFolderChars || !path.isAbsolute(folder)
            );
            return bad === -1
                ? undefined
                : `modelsFolders[${bad}] is ${describe(value[bad])}, not an absolute path of at most ${maxFolderChars.toLocaleString("en-US")} characters.`;
        }
    }
}

/** The file's `modelPool`; a missing one (a file from before it existed) is the defaults, with no problem said. */
export function readModelPoolSettings(value: unknown, problems: string[]): ModelPoolSettings {
    if (value === undefined) {
        return modelPoolSettingDefaults;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        problems.push(`modelPool is ${describe(value)}, not an object; using the defaults.`);
        return modelPoolSettingDefaults;
    }
    const given = value as Record<string, unknown>;
    const read = <N extends ModelPoolSettingName>(name: N): ModelPoolSettings[N] => {
        if (given[name] === undefined) {
            return modelPoolSettingDefaults[name];
        }
        const problem = modelPoolSettingProblem(name, given[name]);
        if (problem !== undefined) {
            problems.push(`modelPool.${problem} Using ${JSON.stringify(modelPoolSettingDefaults[name])}.`);
            return modelPoolSettingDefaults[name];
        }
        return given[name] as ModelPoolSettings[N];
    };
    return Object.freeze({
        modelIdleSeconds: read("modelIdleSeconds"),
        modelsMemoryMb: read("modelsMemoryMb"),
        modelsFolders: Object.freeze([...read("modelsFolders")])
    });
}

/** A short, bounded description for a message: never echoes a huge value back. */
function describe(value: unknown): string {
    if (typeof value === "string") {
        return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length.toLocaleString("en-US")} characters`;
    }
    if (value === null || typeof value === "number" || typeof value === "boolean" || value === undefined) {
        return String(value);
    }
    return Array.isArray(value) ? `a list of ${value.length}` : "an object";
}
