// The app's settings as the settings screen shows and edits them and `<data-dir>/settings.json`
// keeps them: the engine's, the local API's and its keys, with the limits each is checked against.

import type { BackendsSettingView } from "./backends.js";
import { gpuBackendNames, type GpuBackendName } from "./engineCompute.js";
import type { EngineErrorPayload, EngineInfo } from "./engineProtocol.js";
import type { KvCacheType } from "./models.js";

/** The OpenAI-compatible API on 127.0.0.1, as the settings page shows it. */
export interface LocalApiView {
    readonly enabled: boolean;
    readonly port: number;
    /**
     * The bearer key clients must send; stored in the settings file. Null where the page is not
     * given it: the headless server's default key is the one it printed at start (or --api-key).
     */
    readonly apiKey: string | null;
    /** Where it serves, e.g. "http://127.0.0.1:8080"; null while it is off or could not start. */
    readonly url: string | null;
    /** Why it is enabled but not serving (say, the port was taken when Kvault started); null otherwise. */
    readonly problem: EngineErrorPayload | null;
    /** Whether the switch and port can be changed here: the desktop app's; the headless server's API is the server itself. */
    readonly editable: boolean;
}

/**
 * The engine's settings as the settings screen edits them and `<data-dir>/settings.json` keeps
 * them (host/settings/). Counts are tokens unless said otherwise.
 */
export interface EngineSettings {
    /** The context window of each workspace, in tokens (also each prefill and decode sequence's size). */
    readonly contextSize: number;
    /**
     * The compute backend: "auto" (a GPU with a hardware device, else the CPU), a backend's name
     * (that backend, a software device too), or "off" (the CPU alone).
     */
    readonly gpu: GpuBackendSetting;
    /**
     * Layers on the GPU: "auto", as many as fit (node-llama-cpp's choice); a number, that many (0 to
     * the model's layers plus its output layer), the rest on the CPU. Without a GPU every layer
     * stays on the CPU, whatever the number.
     */
    readonly gpuLayers: GpuLayersSetting;
    /** CPU threads; null: llama.cpp's choice (the machine's cores). */
    readonly threads: number | null;
    readonly flashAttention: boolean;
    /** The type of the K and V caches; q8_0 and q4_0 need flash attention. */
    readonly kvCacheType: KvCacheType;
    /** Workspaces decoding at once; more are swapped to pages. */
    readonly decodeSequences: number;
    /** Token positions per KV page. */
    readonly pageTokens: number;
    /** Pages in the host pool; null: a window for every decode sequence, plus one. */
    readonly poolPages: number | null;
    /**
     * Speculative decoding: "off"; "input-lookup", drafts from the chat's own tokens; "draft-model",
     * `draftModel` drafts and the model verifies. Greedy answers stay the model's own.
     */
    readonly speculation: SpeculationSetting;
    /** The draft model's GGUF file, for speculation "draft-model" (kept when speculation is switched off); null: none chosen. */
    readonly draftModel: string | null;
    /** Most tokens the draft model drafts ahead of one step (llama-server's --draft-max). */
    readonly draftMaxTokens: number;
    /** A token the draft model gives less than this probability, 0 to 1, ends its draft (llama-server's --draft-p-min); 0 always drafts draftMaxTokens. */
    readonly draftMinConfidence: number;
}

export const speculationSettings = ["off", "input-lookup", "draft-model"] as const;
export type SpeculationSetting = (typeof speculationSettings)[number];

/** The compute backend (EngineSettings.gpu): "auto", "off" or a backend's name. */
export type GpuBackendSetting = "auto" | "off" | GpuBackendName;

/** Layers on the GPU (EngineSettings.gpuLayers): "auto" (all that fit) or a number of layers. */
export type GpuLayersSetting = "auto" | number;

/** Whether `value` is a compute backend's setting: "auto", "off" or a backend's name. */
export function isGpuBackendSetting(value: unknown): value is GpuBackendSetting {
    return value === "auto" || value === "off" || (gpuBackendNames as readonly unknown[]).includes(value);
}

/** Whether `value` is a layer count engineSettingLimits.gpuLayers allows (a whole number in range). */
export function isGpuLayerCount(value: unknown): value is number {
    const { min, max } = engineSettingLimits.gpuLayers;
    return typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max;
}

export type EngineSettingName = keyof EngineSettings;

/** What each engine setting may be: checked the same on the screen, in the RPC and in the file. */
export const engineSettingLimits = Object.freeze({
    contextSize: { min: 16, max: 1 << 22 },
    threads: { min: 1, max: 1_024 },
    decodeSequences: { min: 1, max: 256 },
    pageTokens: { min: 1, max: 65_536 },
    poolPages: { min: 1, max: 4_194_304 },
    /** Layers on the GPU (gpuLayers as a number); the model's own count, checked by the plan, is usually far lower. */
    gpuLayers: { min: 0, max: 1_024 },
    /** The engine's own bound (MAX_DRAFT_TOKENS): a verification batch beyond it costs more than it can save. */
    draftMaxTokens: { min: 1, max: 64 }
});

/** Whether `value` is a probability the draft's threshold may be: a number from 0 to 1. */
export function isDraftConfidence(value: unknown): value is number {
    return typeof value === "number" && value >= 0 && value <= 1;
}

/** An API key beside the default one, as the settings screen lists it: never its secret. */
export interface ApiKeyView {
    readonly id: string;
    /** ISO 8601; null for a key from the command line. */
    readonly createdAt: string | null;
    /** "settings": created on the settings screen, kept in settings.json, revocable there; "command line": --extra-api-key, for this run. */
    readonly source: "settings" | "command line";
}

export interface AppSettingsView {
    /** The desktop app or the headless server (npm run serve): what can be changed here differs. */
    readonly host: "desktop" | "headless";
    readonly localApi: LocalApiView;
    /** The GGUF the engine loads at start; null for the built-in demo model. */
    readonly modelPath: string | null;
    /** The state (data) directory: chats, models, settings.json; shown read-only. */
    readonly stateDirectory: string;
    readonly settingsFile: string;
    /** The engine settings the file keeps (what the next start uses, but for command-line values). */
    readonly engine: EngineSettings;
    /** What the engine runs with now. */
    readonly running: EngineSettings;
    /** Settings given on the command line for this run, each with its flag (e.g. contextSize: "--context"): not editable here. */
    readonly fromCommandLine: Readonly<Partial<Record<EngineSettingName, string>>>;
    readonly apiKeys: readonly ApiKeyView[];
    /** The remote backends in force (their keys never: whether one is set), and whether the screen may change them. */
    readonly backends: BackendsSettingView;
    /** What reading settings.json at start found unusable, one line each (that field fell back to its default). */
    readonly problems: readonly string[];
}

/** Switches the local API; the settings change only if the server could be brought to that state. */
export interface LocalApiChange {
    readonly enabled: boolean;
    /** localApiPorts: ports below need administrator rights on most systems. */
    readonly port: number;
}

/** The ports the local API may listen on. */
export const localApiPorts = Object.freeze({ min: 1024, max: 65_535 });

/** One line of an engine settings plan's memory: what takes it, and how many bytes. */
export interface MemoryLine {
    readonly what: "weights" | "decodeKv" | "prefillKv" | "pagePool" | "draftWeights" | "draftKv";
    /** E.g. "KV of the decode context: 4,096 tokens × 4 sequences × 512 bytes (F16)". */
    readonly label: string;
    readonly bytes: number;
    /** Where it lives: host RAM, or the GPU's memory when the layers are offloaded. */
    readonly where: "ram" | "vram";
}

/** What applying engine settings would take and do (planEngineSettings), before anything changes. */
export interface EngineSettingsPlan {
    /** The settings it would run with: the current ones with the change on top. */
    readonly settings: EngineSettings;
    /** The settings that differ from what runs now; empty: nothing to apply. */
    readonly changed: readonly EngineSettingName[];
    readonly memory: readonly MemoryLine[];
    readonly ramNeededBytes: number;
    readonly vramNeededBytes: number;
    /** Free RAM now plus what the running engine gives back when it stops (its own plan's RAM). */
    readonly ramAvailableBytes: number;
    /** The GPU's free memory plus the running engine's; null when no GPU is in use or it is not known. */
    readonly vramAvailableBytes: number | null;
    /** Whether it can be applied; otherwise `problems` say why, with the numbers and what to change. */
    readonly fits: boolean;
    readonly problems: readonly string[];
    /** Things to know that do not stop it (e.g. the window is above the model's training context). */
    readonly notes: readonly string[];
    /** What applying it restarts, e.g. "The engine restarts; 2 running turns end with engine_settings_changed." */
    readonly restart: string | null;
}

export interface AppliedEngineSettings {
    readonly plan: EngineSettingsPlan;
    readonly info: EngineInfo;
    readonly view: AppSettingsView;
}

/** A new API key: its secret is in this answer only (shown once; settings.json keeps it for the server). */
export interface CreatedApiKey {
    readonly id: string;
    readonly key: string;
    readonly view: AppSettingsView;
}
