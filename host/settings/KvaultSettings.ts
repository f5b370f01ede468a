// What `<data-dir>/settings.json` holds, for both hosts (the desktop app's userData, the headless
// server's --data-dir): its shape, its defaults and its version. Pure (no file access); the file's
// tolerant reader is parseSettingsFile.ts, the store SettingsFile.ts.
import crypto from "node:crypto";
import { modelPoolSettingDefaults, type ModelPoolSettings } from "../../contract/modelPoolSettings.js";
import type { EngineSettings } from "../../contract/settings.js";
import { engineDefaults } from "../../engine/index.js";

/**
 * The version this Kvault writes. 1: the desktop app's local API, model and theme; 2: engine
 * settings and API keys added, then remote backends (a field older version-2 readers keep as it is).
 */
export const SETTINGS_VERSION = 2;

export interface LocalApiSettings {
    readonly enabled: boolean;
    readonly port: number;
    /** Bearer key of the local API (the default key, namespace `api:`); generated once and kept, so scripts keep working across starts. */
    readonly apiKey: string;
}

/** Light or dark: as the system says, or one of them whatever it says (the desktop app's View › Dark Mode). */
export type ThemeSource = "system" | "light" | "dark";

/** A key created on the settings screen: its own workspace namespace (`api@ID~GENERATION:`), until revoked there. */
export interface StoredApiKey {
    readonly id: string;
    readonly key: string;
    /** ISO 8601. */
    readonly createdAt: string;
    /** Drawn when the key is created (ApiKeys' API_KEY_GENERATION_PATTERN): a later key by the same id gets another namespace. */
    readonly generation: string;
}

/**
 * A remote backend added on the settings screen (the same rules as `--backend`: checkBackendEntry).
 * `key` is kept here, as the API keys are (the file is mode 0600), and never sent to the renderer.
 */
export interface StoredBackend {
    readonly name: string;
    /** As typed: an OpenAI-compatible base URL (a URL without a path gets `/v1`). */
    readonly url: string;
    readonly model?: string;
    readonly key?: string;
    /** The user allowed a URL beyond loopback (its chats leave this machine). */
    readonly allowRemote: boolean;
    /** Fields of the entry this Kvault does not know (a newer one's), written back as they were. */
    readonly extra?: Readonly<Record<string, unknown>>;
}

export interface KvaultSettings {
    /** SETTINGS_VERSION, or the higher version of a newer Kvault's file (kept, so that one reads its file back whole). */
    readonly version: number;
    readonly localApi: LocalApiSettings;
    readonly apiKeys: readonly StoredApiKey[];
    /** An absolute path to a GGUF file, or null for the built-in demo model; the model loaded at start. */
    readonly modelPath: string | null;
    readonly engine: EngineSettings;
    readonly theme: ThemeSource;
    /** The remote backends in force when the command line gives none (`--backend` replaces them for its run). */
    readonly backends: readonly StoredBackend[];
    /** The local models beside the engine's: idle time, memory budget, model folders (the headless server's flags override them for a run). */
    readonly modelPool: ModelPoolSettings;
    /** Fields this Kvault does not know (a newer one's), written back as they were: never lost. */
    readonly extra: Readonly<Record<string, unknown>>;
}

/** Defaults in one place. */
export const settingsDefaults = {
    localApiEnabled: false,
    /** The headless server's default port too; a running `npm run serve` makes the app's API report the port as taken. */
    localApiPort: 8080,
    modelPath: null,
    theme: "system"
} as const;

/** The engine settings by default, the headless server's and the desktop app's: engine/EngineConfig.ts's engineDefaults, under the settings' names. */
export const engineSettingDefaults: EngineSettings = Object.freeze({
    contextSize: engineDefaults.window,
    gpu: engineDefaults.gpu,
    gpuLayers: "auto",
    threads: null,
    flashAttention: engineDefaults.flashAttention,
    kvCacheType: engineDefaults.kvCacheType,
    decodeSequences: engineDefaults.numDecodeSequences,
    pageTokens: engineDefaults.pageTokens,
    // null: a full window for every decode sequence, plus one (defaultPoolPages), not the engine's own numPages
    poolPages: null,
    speculation: "off",
    draftModel: null,
    draftMaxTokens: engineDefaults.draftMaxTokens,
    draftMinConfidence: engineDefaults.draftMinConfidence
});

/** Ports below 1024 need administrator rights on most systems. */
export const localApiPorts = { min: 1024, max: 65_535 } as const;

/** The same rule as the headless server's --api-key: safe in a header, a URL and a meta tag. */
export const API_KEY_PATTERN = /^[A-Za-z0-9_.-]{8,200}$/;

/** 192 random bits, in the headless server's format. */
export function newApiKey(): string {
    return `kv-${crypto.randomBytes(24).toString("hex")}`;
}

export function defaultSettings(makeApiKey: () => string = newApiKey): KvaultSettings {
    return Object.freeze({
        version: SETTINGS_VERSION,
        localApi: Object.freeze({ enabled: settingsDefaults.localApiEnabled, port: settingsDefaults.localApiPort, apiKey: makeApiKey() }),
        apiKeys: Object.freeze([]),
        modelPath: settingsDefaults.modelPath,
        engine: engineSettingDefaults,
        theme: settingsDefaults.theme,
        backends: Object.freeze([]),
        modelPool: modelPoolSettingDefaults,
        extra: Object.freeze({})
    });
}

/** The pages the pool gets when the settings leave it to Kvault: a full window for every decode sequence, plus one for the handoff. */
export function defaultPoolPages(settings: Pick<EngineSettings, "contextSize" | "pageTokens" | "decodeSequences">): number {
    return Math.ceil(settings.contextSize / settings.pageTokens) * (settings.decodeSequences + 1);
}

/** The file's text: the known fields in a stable order, then the unknown ones as they were. */
export function serializeSettings(settings: KvaultSettings): string {
    const { extra, backends, ...known } = settings;
    const entries = backends.map(({ extra: entryExtra, ...entry }) => ({ ...entry, ...entryExtra }));
    return `${JSON.stringify({ ...known, backends: entries, ...extra }, null, 4)}\n`;
}
