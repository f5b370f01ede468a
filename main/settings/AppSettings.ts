// Pure on purpose (no electron, no file access): what the settings file may hold, its defaults,
// and the checks at its two edges, the file (tolerant: a bad field falls back to its default) and
// the renderer (strict: a bad change is refused). Unit-tested alone.
import crypto from "node:crypto";
import path from "node:path";
import type { LocalApiChange } from "../../contract/KvaultBridge.js";
import { InvalidRequestError } from "../../engine/index.js";

export interface LocalApiSettings {
    readonly enabled: boolean;
    readonly port: number;
    /** Bearer key of the local API; generated once and kept, so scripts keep working across starts. */
    readonly apiKey: string;
}

/** Light or dark: as the system says, or one of them whatever it says (View › Dark Mode). */
export type ThemeSource = "system" | "light" | "dark";

export interface AppSettings {
    readonly version: 1;
    readonly localApi: LocalApiSettings;
    /** An absolute path to a GGUF file, or null for the built-in demo model; the model loaded last. */
    readonly modelPath: string | null;
    readonly theme: ThemeSource;
}

/** Defaults in one place. */
export const settingsDefaults = {
    localApiEnabled: false,
    /** The headless server's default port too; a running `npm run serve` makes the app's API report the port as taken. */
    localApiPort: 8080,
    modelPath: null,
    theme: "system"
} as const;

const THEME_SOURCES: readonly ThemeSource[] = ["system", "light", "dark"];

/** Ports below 1024 need administrator rights on most systems. */
export const localApiPorts = { min: 1024, max: 65_535 } as const;

/** The same rule as the headless server's --api-key: safe in a header, a URL and a meta tag. */
const API_KEY_PATTERN = /^[A-Za-z0-9_.-]{8,200}$/;
const MAX_MODEL_PATH_CHARS = 4_096;

/** 192 random bits, in the headless server's format. */
export function newApiKey(): string {
    return `kv-${crypto.randomBytes(24).toString("hex")}`;
}

export function defaultAppSettings(makeApiKey: () => string = newApiKey): AppSettings {
    return Object.freeze({
        version: 1,
        localApi: Object.freeze({ enabled: settingsDefaults.localApiEnabled, port: settingsDefaults.localApiPort, apiKey: makeApiKey() }),
        modelPath: settingsDefaults.modelPath,
        theme: settingsDefaults.theme
    });
}

export interface ParsedAppSettings {
    readonly settings: AppSettings;
    /** One line per field that was missing or unusable and got its default, for the log. */
    readonly problems: readonly string[];
}

/**
 * Reads what the settings file held. Never throws: a hand-edited or older file keeps every field
 * that is usable, and each other field falls back to its default with a line saying so.
 */
export function parseAppSettings(value: unknown, makeApiKey: () => string = newApiKey): ParsedAppSettings {
    const problems: string[] = [];
    const file = isRecord(value) ? value : {};
    if (!isRecord(value)) {
        problems.push("The settings are not a JSON object; using the defaults.");
    }
    const localApi = isRecord(file.localApi) ? file.localApi : {};
    if (isRecord(value) && !isRecord(file.localApi)) {
        problems.push("localApi is missing or not an object; using the defaults.");
    }

    let enabled: boolean = settingsDefaults.localApiEnabled;
    if (typeof localApi.enabled === "boolean") {
        enabled = localApi.enabled;
    } else if (localApi.enabled !== undefined) {
        problems.push(`localApi.enabled is ${describe(localApi.enabled)}, not true or false; the local API stays off.`);
    }
    let port: number = settingsDefaults.localApiPort;
    if (isPort(localApi.port)) {
        port = localApi.port;
    } else if (localApi.port !== undefined) {
        problems.push(
            `localApi.port is ${describe(localApi.port)}; it must be a whole number from ${localApiPorts.min} to ${localApiPorts.max}. Using ${port}.`
        );
    }
    let apiKey: string;
    if (typeof localApi.apiKey === "string" && API_KEY_PATTERN.test(localApi.apiKey)) {
        apiKey = localApi.apiKey;
    } else {
        apiKey = makeApiKey();
        if (localApi.apiKey !== undefined) {
            problems.push("localApi.apiKey is not 8 to 200 letters, digits, '_', '.' or '-'; a new key was made.");
        }
    }
    let modelPath: string | null = settingsDefaults.modelPath;
    if (typeof file.modelPath === "string" && file.modelPath.length <= MAX_MODEL_PATH_CHARS && path.isAbsolute(file.modelPath)) {
        modelPath = file.modelPath;
    } else if (file.modelPath !== undefined && file.modelPath !== null) {
        problems.push(`modelPath is ${describe(file.modelPath)}, not an absolute path; using the built-in demo model.`);
    }

    // Missing in a file from before there was a choice: no problem, the system's theme.
    let theme: ThemeSource = settingsDefaults.theme;
    if (THEME_SOURCES.includes(file.theme as ThemeSource)) {
        theme = file.theme as ThemeSource;
    } else if (file.theme !== undefined) {
        problems.push(`theme is ${describe(file.theme)}, not "system", "light" or "dark"; following the system.`);
    }

    return {
        settings: Object.freeze({ version: 1, localApi: Object.freeze({ enabled, port, apiKey }), modelPath, theme }),
        problems
    };
}

/** View › Dark Mode: the other one of light and dark from what shows now (`showingDark`, the system's when following it). */
export function toggledTheme(showingDark: boolean): ThemeSource {
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

/** A short, bounded description for a message: never echoes a huge value back. */
function describe(value: unknown): string {
    if (typeof value === "string") {
        return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length.toLocaleString("en-US")} characters`;
    }
    if (value === null || typeof value === "number" || typeof value === "boolean") {
        return String(value);
    }
    return Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : typeof value;
}
