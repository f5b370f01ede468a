// The settings file's tolerant reader: a hand-edited, older or newer file keeps every field that is
// usable, each other field falls back to its default with a line saying so, and fields this Kvault
// does not know are kept to be written back. Never throws. Unit-tested alone.
import path from "node:path";
import {
    engineSettingLimits,
    isDraftConfidence,
    isGpuBackendSetting,
    isGpuLayerCount,
    speculationSettings,
    type EngineSettings,
    type SpeculationSetting
} from "../../contract/settings.js";
import { maxStoredBackends } from "../../contract/backends.js";
import { readModelPoolSettings } from "./readModelPoolSettings.js";
import { kvCacheTypes, type KvCacheType } from "../../contract/models.js";
import { checkBackendEntry, repeatedBackendName } from "../backends/BackendConfig.js";
import { API_KEY_GENERATION_PATTERN, API_KEY_ID_PATTERN, newApiKeyGeneration } from "../http/ApiKeys.js";
import {
    API_KEY_PATTERN,
    engineSettingDefaults,
    localApiPorts,
    newApiKey,
    SETTINGS_VERSION,
    settingsDefaults,
    type KvaultSettings,
    type StoredApiKey,
    type StoredBackend,
    type ThemeSource
} from "./KvaultSettings.js";

export interface ParsedSettings {
    readonly settings: KvaultSettings;
    /** One line per field that was missing or unusable and got its default, for the log and the settings screen. */
    readonly problems: readonly string[];
}

const KNOWN_FIELDS = new Set(["version", "localApi", "apiKeys", "modelPath", "engine", "theme", "backends", "modelPool"]);
const THEME_SOURCES: readonly ThemeSource[] = ["system", "light", "dark"];
const MAX_MODEL_PATH_CHARS = 4_096;
/** More than anyone creates by hand; a file with more is damaged or hostile, and createApiKey refuses one more (api_key_limit_reached). */
export const MAX_STORED_API_KEYS = 256;

/** Reads what the settings file held (version 1 files are migrated: they had no engine settings nor API keys). */
export function parseSettingsFile(value: unknown, makeApiKey: () => string = newApiKey): ParsedSettings {
    const problems: string[] = [];
    const file = isRecord(value) ? value : {};
    if (!isRecord(value)) {
        problems.push("The settings are not a JSON object; using the defaults.");
    }
    let version = SETTINGS_VERSION;
    if (Number.isSafeInteger(file.version) && (file.version as number) > SETTINGS_VERSION) {
        version = file.version as number;
        problems.push(
            `The settings file is version ${version}, from a newer Kvault; this one (version ${SETTINGS_VERSION}) uses the fields it knows and keeps the others as they are.`
        );
    } else if (file.version !== undefined && file.version !== 1 && file.version !== SETTINGS_VERSION) {
        problems.push(
            `version is ${describe(file.version)}, not 1 or ${SETTINGS_VERSION}; reading the file as version ${SETTINGS_VERSION}.`
        );
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
    if (isWhole(localApi.port, localApiPorts.min, localApiPorts.max)) {
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

    const extra = Object.fromEntries(Object.entries(file).filter(([name]) => !KNOWN_FIELDS.has(name)));
    return {
        settings: Object.freeze({
            version,
            localApi: Object.freeze({ enabled, port, apiKey }),
            apiKeys: readApiKeys(file.apiKeys, apiKey, problems),
            modelPath,
            engine: readEngineSettings(file.engine, problems),
            theme,
            backends: readBackends(file.backends, problems),
            modelPool: readModelPoolSettings(file.modelPool, problems),
            extra: Object.freeze(extra)
        }),
        problems
    };
}

/** `engine`: missing (a version 1 file) is the defaults, silently; each bad field is its default, with a line. */
function readEngineSettings(value: unknown, problems: string[]): EngineSettings {
    if (value === undefined) {
        return engineSettingDefaults;
    }
    if (!isRecord(value)) {
        problems.push(`engine is ${describe(value)}, not an object; using the default engine settings.`);
        return engineSettingDefaults;
    }
    const defaults = engineSettingDefaults;
    const whole = (name: "contextSize" | "decodeSequences" | "pageTokens" | "draftMaxTokens"): number => {
        const { min, max } = engineSettingLimits[name];
        const given = value[name];
        if (isWhole(given, min, max)) {
            return given;
        }
        if (given !== undefined) {
            problems.push(
                `engine.${name} is ${describe(given)}; it must be a whole number from ${range(min, max)}. Using ${defaults[name]}.`
            );
        }
        return defaults[name];
    };
    const wholeOrAuto = (name: "threads" | "poolPages"): number | null => {
        const { min, max } = engineSettingLimits[name];
        const given = value[name];
        if (given === null || isWhole(given, min, max)) {
            return given;
        }
        if (given !== undefined) {
            problems.push(
                `engine.${name} is ${describe(given)}; it must be null (Kvault's choice) or a whole number from ${range(min, max)}. Using Kvault's choice.`
            );
        }
        return null;
    };
    const { gpu, gpuLayers } = gpuSettings(value, defaults, problems);
    let flashAttention = defaults.flashAttention;
    if (typeof value.flashAttention === "boolean") {
        flashAttention = value.flashAttention;
    } else if (value.flashAttention !== undefined) {
        problems.push(`engine.flashAttention is ${describe(value.flashAttention)}, not true or false; it stays on.`);
    }
    let kvCacheType: KvCacheType = defaults.kvCacheType;
    if (kvCacheTypes.includes(value.kvCacheType as KvCacheType)) {
        kvCacheType = value.kvCacheType as KvCacheType;
    } else if (value.kvCacheType !== undefined) {
        problems.push(`engine.kvCacheType is ${describe(value.kvCacheType)}, not one of ${kvCacheTypes.join(", ")}; using f16.`);
    }
    if (kvCacheType !== "f16" && !flashAttention) {
        problems.push(`engine.kvCacheType is ${kvCacheType}, which needs flash attention, and engine.flashAttention is false; using f16.`);
        kvCacheType = "f16";
    }
    let draftModel: string | null = defaults.draftModel;
    if (typeof value.draftModel === "string" && value.draftModel.length <= MAX_MODEL_PATH_CHARS && path.isAbsolute(value.draftModel)) {
        draftModel = value.draftModel;
    } else if (value.draftModel !== undefined && value.draftModel !== null) {
        problems.push(`engine.draftModel is ${describe(value.draftModel)}, not an absolute path; no draft model.`);
    }
    let speculation: SpeculationSetting = defaults.speculation;
    if (speculationSettings.includes(value.speculation as SpeculationSetting)) {
        speculation = value.speculation as SpeculationSetting;
    } else if (value.speculation !== undefined) {
        problems.push(`engine.speculation is ${describe(value.speculation)}, not one of ${speculationSettings.join(", ")}; it stays off.`);
    }
    if (speculation === "draft-model" && draftModel === null) {
        problems.push('engine.speculation is "draft-model", but engine.draftModel names no draft model; it stays off.');
        speculation = "off";
    }
    let draftMinConfidence = defaults.draftMinConfidence;
    if (isDraftConfidence(value.draftMinConfidence)) {
        draftMinConfidence = value.draftMinConfidence;
    } else if (value.draftMinConfidence !== undefined) {
        problems.push(
            `engine.draftMinConfidence is ${describe(value.draftMinConfidence)}, not a probability from 0 to 1; using ${defaults.draftMinConfidence}.`
        );
    }
    return Object.freeze({
        contextSize: whole("contextSize"),
        gpu,
        gpuLayers,
        threads: wholeOrAuto("threads"),
        flashAttention,
        kvCacheType,
        decodeSequences: whole("decodeSequences"),
        pageTokens: whole("pageTokens"),
        poolPages: wholeOrAuto("poolPages"),
        speculation,
        draftModel,
        draftMaxTokens: whole("draftMaxTokens"),
        draftMinConfidence
    });
}

/**
 * engine.gpu, the backend, and engine.gpuLayers. A number in engine.gpu is an older Kvault's file,
 * where one field held a backend or a layer count: it is read as the "auto" backend with that many
 * layers, not as a problem, and written back in the two fields.
 */
function gpuSettings(
    value: Record<string, unknown>,
    defaults: EngineSettings,
    problems: string[]
): Pick<EngineSettings, "gpu" | "gpuLayers"> {
    const layers = engineSettingLimits.gpuLayers;
    const olderLayers = isGpuLayerCount(value.gpu) ? value.gpu : undefined;
    let gpu = defaults.gpu;
    if (isGpuBackendSetting(value.gpu)) {
        gpu = value.gpu;
    } else if (value.gpu !== undefined && olderLayers === undefined) {
        problems.push(`engine.gpu is ${describe(value.gpu)}, not "auto", "off", "cuda", "vulkan" or "metal"; using "auto".`);
    }
    let gpuLayers = olderLayers ?? defaults.gpuLayers;
    if (value.gpuLayers === "auto" || isGpuLayerCount(value.gpuLayers)) {
        gpuLayers = value.gpuLayers;
    } else if (value.gpuLayers !== undefined) {
        problems.push(
            `engine.gpuLayers is ${describe(value.gpuLayers)}, not "auto" or a whole number of layers from ${range(layers.min, layers.max)}; using ${JSON.stringify(gpuLayers)}.`
        );
    }
    return { gpu, gpuLayers };
}
/**
 * `apiKeys`: each usable entry is kept; a malformed or duplicate one is dropped with a line (it no
 * longer opens anything). An entry without a generation (an older Kvault's) gets a new one, kept
 * from then on: its workspaces of before are in no namespace any key reaches.
 */
function readApiKeys(value: unknown, defaultKey: string, problems: string[]): readonly StoredApiKey[] {
    if (value === undefined) {
        return Object.freeze([]);
    }
    if (!Array.isArray(value)) {
        problems.push(`apiKeys is ${describe(value)}, not a list; no extra API keys are in force.`);
        return Object.freeze([]);
    }
    const keys: StoredApiKey[] = [];
    for (const [index, entry] of value.entries()) {
        if (keys.length === MAX_STORED_API_KEYS) {
            problems.push(`apiKeys holds ${value.length} keys; only the first ${MAX_STORED_API_KEYS} are in force.`);
            break;
        }
        const usable =
            isRecord(entry) &&
            typeof entry.id === "string" &&
            API_KEY_ID_PATTERN.test(entry.id) &&
            typeof entry.key === "string" &&
            API_KEY_PATTERN.test(entry.key) &&
            typeof entry.createdAt === "string" &&
            !Number.isNaN(Date.parse(entry.createdAt));
        if (!usable) {
            problems.push(
                `apiKeys[${index}] is not {id, key, createdAt} with an id of 1 to 40 letters, digits, '_' or '-' and a key of 8 to 200; that key is not in force.`
            );
            continue;
        }
        if (entry.key === defaultKey || keys.some((other) => other.id === entry.id || other.key === entry.key)) {
            problems.push(`apiKeys[${index}] ("${entry.id as string}") repeats another key's id or secret; only the first is in force.`);
            continue;
        }
        const generation =
            typeof entry.generation === "string" && API_KEY_GENERATION_PATTERN.test(entry.generation)
                ? entry.generation
                : newApiKeyGeneration();
        if (entry.generation !== undefined && entry.generation !== generation) {
            problems.push(`apiKeys[${index}] ("${entry.id as string}") has a generation that is not 16 hex digits; it got a new one.`);
        }
        keys.push(Object.freeze({ id: entry.id as string, key: entry.key as string, createdAt: entry.createdAt as string, generation }));
    }
    return Object.freeze(keys);
}

const BACKEND_FIELDS = new Set(["name", "url", "model", "key", "allowRemote"]);

/**
 * `backends`: each entry is checked with `--backend`'s rules (checkBackendEntry); one that breaks
 * them, or repeats an earlier one's name, is dropped with a line (it is not in force). Missing: none.
 */
function readBackends(value: unknown, problems: string[]): readonly StoredBackend[] {
    if (value === undefined) {
        return Object.freeze([]);
    }
    if (!Array.isArray(value)) {
        problems.push(`backends is ${describe(value)}, not a list; no remote backend from the settings is in force.`);
        return Object.freeze([]);
    }
    const backends: StoredBackend[] = [];
    for (const [index, entry] of value.entries()) {
        if (backends.length === maxStoredBackends) {
            problems.push(`backends holds ${value.length} backends; only the first ${maxStoredBackends} are in force.`);
            break;
        }
        const shaped =
            isRecord(entry) &&
            typeof entry.name === "string" &&
            typeof entry.url === "string" &&
            (entry.model === undefined || typeof entry.model === "string") &&
            (entry.key === undefined || typeof entry.key === "string") &&
            (entry.allowRemote === undefined || typeof entry.allowRemote === "boolean");
        if (!shaped) {
            problems.push(
                `backends[${index}] is not {name, url, model?, key?, allowRemote} with text for the first four and true or false for allowRemote; that backend is not in force.`
            );
            continue;
        }
        const stored: StoredBackend = {
            name: entry.name as string,
            url: entry.url as string,
            ...(entry.model === undefined ? {} : { model: entry.model as string }),
            ...(entry.key === undefined ? {} : { key: entry.key as string }),
            allowRemote: entry.allowRemote === true
        };
        const checked = checkBackendEntry(stored);
        if (!checked.ok) {
            problems.push(`backends[${index}] (${describe(stored.name)}): ${checked.reason}; that backend is not in force.`);
            continue;
        }
        if (repeatedBackendName([...backends, stored]) !== undefined) {
            problems.push(`backends[${index}] repeats the name "${stored.name}" of an earlier backend; only the first is in force.`);
            continue;
        }
        const extra = Object.entries(entry).filter(([name]) => !BACKEND_FIELDS.has(name));
        backends.push(Object.freeze(extra.length === 0 ? stored : { ...stored, extra: Object.freeze(Object.fromEntries(extra)) }));
    }
    return Object.freeze(backends);
}

function isWhole(value: unknown, min: number, max: number): value is number {
    return typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max;
}

function range(min: number, max: number): string {
    return `${min.toLocaleString("en-US")} to ${max.toLocaleString("en-US")}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A short, bounded description for a message: never echoes a huge value back. */
export function describe(value: unknown): string {
    if (typeof value === "string") {
        return value.length <= 40 ? JSON.stringify(value) : `a string of ${value.length.toLocaleString("en-US")} characters`;
    }
    if (value === null || typeof value === "number" || typeof value === "boolean") {
        return String(value);
    }
    return Array.isArray(value) ? "a list" : typeof value === "object" ? "an object" : typeof value;
}
