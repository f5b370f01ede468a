// The desktop app's own bits of the settings (pure on purpose: no electron, no file access): the
// theme's toggle and the check of a local API change from the renderer (strict: a bad change is
// refused). The settings file itself, shared with the headless server, is host/settings/.
import type { LocalApiChange } from "../../contract/settings.js";
import { InvalidRequestError } from "../../engine/index.js";
import { describe } from "../../host/settings/parseSettingsFile.js";
import { localApiPorts } from "../../host/settings/KvaultSettings.js";

export { localApiPorts, type LocalApiSettings, type ThemeSource } from "../../host/settings/KvaultSettings.js";

/** View › Dark Mode: the other one of light and dark from what shows now (`showingDark`, the system's when following it). */
export function toggledTheme(showingDark: boolean): "light" | "dark" {
    return showingDark ? "light" : "dark";
}

/** Checks a change the renderer asked for; throws InvalidRequestError naming the field. */
export function parseLocalApiChange(value: unknown): LocalApiChange {
    if (!isRecord(value)) {
        throw new InvalidRequestError(`setLocalApi takes {enabled, port}; got ${describe(value)}.`);
    }
    for (const key of Object.keys(value)) {
        if (key !== "enabled" && key !== "port") {
            throw new InvalidRequestError(`setLocalApi takes no field ${describe(key)}; its fields are {enabled, port}.`);
        }
    }
    if (typeof value.enabled !== "boolean") {
        throw new InvalidRequestError(`enabled must be true or false; got ${describe(value.enabled)}.`);
    }
    if (!isPort(value.port)) {
        throw new InvalidRequestError(
            `port is ${describe(value.port)}; choose a whole number from ${localApiPorts.min} to ${localApiPorts.max}.`
        );
    }
    return { enabled: value.enabled, port: value.port };
}

function isPort(value: unknown): value is number {
    return typeof value === "number" && Number.isSafeInteger(value) && value >= localApiPorts.min && value <= localApiPorts.max;
}

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
