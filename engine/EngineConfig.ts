import { gpuBackendNames, type GpuBackendName } from "../contract/engineCompute.js";
import { isKvCacheType, kvCacheTypes, type KvCacheType } from "./codec/kvCacheTypes.js";
import { KvaultError } from "./core/KvaultError.js";
import { DISK_KV_KEY_BYTES } from "./workspace/diskKvFormat.js";

/** The window by default, in tokens; the prefill and decode contexts are as large. */
const DEFAULT_WINDOW = 4096;

/**
 * The engine's defaults, the one place every layer reads them from: the
 * settings' (host/settings/KvaultSettings.ts), the headless server's options and the app's start.
 */
export const engineDefaults = {
    mode: "split",
    window: DEFAULT_WINDOW,
    prefillContextSize: DEFAULT_WINDOW,
    decodeContextSize: DEFAULT_WINDOW,
    numDecodeSequences: 4,
    pageTokens: 256,
    numPages: 256,
    /**
     * 128: short turns arriving together batch with decode in place; through the single prefill
     * sequence they would queue one behind another (npm run bench -- workspaces; figures in
     * docs/measurements.md).
     */
    inPlacePrefillTokens: 128,
    /**
     * 128: while streams decode, a long prompt prefills in chunks of this many tokens between their
     * steps, so it keeps most of the machine and a stream still steps every chunk (ComputeTurns;
     * npm run bench -- peer; figures in docs/measurements.md).
     */
    prefillChunkTokens: 128,
    flashAttention: true,
    kvCacheType: "f16",
    onWindowAboveCapacity: "clamp",
    gpu: "auto",
    stateExchange: "auto",
    llamaBinary: "auto",
    handoffStepDelayMs: 0,
    tokenDelayMs: 0,
    /** node-llama-cpp's defaults for its draft predictor: up to 16 tokens, each at least 60 % likely. */
    draftMaxTokens: 16,
    draftMinConfidence: 0.6
} as const;

export type EngineMode = "split" | "unified";

export interface EngineConfig {
    readonly modelPath: string;
    /** "split": a prefill context hands KV to a decode context through pages; "unified": one context does both. */
    readonly mode: EngineMode;
    /** The context window the user asked for, in tokens; the advertised limit is never above the measured capacities. */
    readonly window: number;
    /** Tokens of each prefill sequence (split mode). */
    readonly prefillContextSize: number;
    /**
     * Prefill sequences (split mode): this many long prompts are prefilled at once, their tokens in
     * the same llama.cpp batches, so turns arriving together wait for one batch, not for each other.
     * By default one per decode sequence (a turn prefills only once it holds one). Each costs a
     * sequence of `prefillContextSize` KV cells in memory.
     */
    readonly numPrefillSequences: number;
    /** Tokens per decode sequence (the unified context's, in unified mode). */
    readonly decodeContextSize: number;
    readonly numDecodeSequences: number;
    /** Token positions per page. */
    readonly pageTokens: number;
    readonly numPages: number;
    /**
     * A turn whose new tokens (beyond the one decode always evaluates) are at most this many is
     * evaluated in place in the decode context; longer ones go through prefill and the handoff,
     * so a long paste does not stall every other workspace's stream.
     */
    readonly inPlacePrefillTokens: number;
    /**
     * Split mode: while any decode sequence generates, a prefill batch holds at most this many tokens,
     * computed in its turn between two decode steps (runtime/ComputeTurns.ts); with no stream to
     * serve, a prefill batch is as large as the batch size. At least the 64 tokens llama.cpp's CPU
     * flash attention needs for its tiled path.
     */
    readonly prefillChunkTokens: number;
    /** Flash attention keeps V in rows (faster to page); off, llama.cpp stores V transposed. Both are supported. */
    readonly flashAttention: boolean;
    /**
     * The type of the K and V caches (both). A quantized type needs flash attention, and heads a
     * whole number of its 32-value blocks wide; pages follow the type's row size (Q8_0 stores 32
     * values in 34 bytes, Q4_0 in 18, F16 in 64), so the same pool holds more tokens.
     */
    readonly kvCacheType: KvCacheType;
    readonly batchSize?: number;
    /**
     * Speculative decoding in the decode sequences, verified in one step (greedy output as plain
     * decoding's, but where the model's two likeliest tokens are within rounding of a tie); off
     * when absent. "input-lookup" drafts tokens from the sequence's own tokens (a chat that quotes
     * its context); "draft-model" has `draftModelPath` draft them.
     */
    readonly speculation?: "input-lookup" | "draft-model";
    /** The draft model of speculation "draft-model": a GGUF with the model's tokenizer (a smaller or more quantized model of the same family). */
    readonly draftModelPath?: string;
    /** Most tokens the draft model drafts ahead of one decode step, 1–64. */
    readonly draftMaxTokens: number;
    /** A token the draft model gives less than this probability ends its draft, 0–1; 0 always drafts `draftMaxTokens`. */
    readonly draftMinConfidence: number;
    /** A window above what the contexts and pool can hold is clamped and reported, or refused at start. */
    readonly onWindowAboveCapacity: "clamp" | "refuse";
    /**
     * "auto": a GPU binary when it has a hardware device, else the CPU with Kvault's own build; a
     * named backend whatever its devices (a software one too), refused when it cannot start; false: the CPU.
     */
    readonly gpu: "auto" | GpuBackendName | false;
    /**
     * Layers of the model on the GPU (node-llama-cpp's `loadModel({ gpuLayers })`), 0 to the
     * model's layers plus its output layer; absent: node-llama-cpp's "auto" (as many as fit). On
     * the CPU (no GPU binary, or gpu false) node-llama-cpp keeps every layer there, whatever the number.
     */
    readonly gpuLayers?: number;
    readonly threads?: number;
    /**
     * Where the engine makes its private (0700) directory for KV state files, which live there for
     * an instant during every handoff. By default /dev/shm where it is writable (KV bytes stay in
     * memory), else the OS temp directory.
     */
    readonly stateRoot?: string;
    /**
     * How KV states leave and enter llama.cpp in handoffs and swaps. "auto" (the default): through
     * memory when the loaded binary carries Kvault's addon patch (`npm run build-llama`'s builds),
     * else through files in the private state directory. "file": always through the directory,
     * whatever the binary (to rule the patch out, and for tests of the directory's faults).
     */
    readonly stateExchange: "auto" | "file";
    /**
     * Which llama.cpp binary the engine loads. "auto" (the default): a local build of Kvault's
     * (`npm run build-llama`, patched) when there is one, else node-llama-cpp's prebuilt. "prebuilt":
     * always the prebuilt, the fallback that always works (to rule a local build out, and for tests
     * of the prebuilt's own start-up).
     */
    readonly llamaBinary: "auto" | "prebuilt";
    /**
     * The page map's demo mode: milliseconds a handoff waits before each of its steps, so that a
     * person sees pages go prefill → host → decode. 0 (the default) waits not at all.
     */
    readonly handoffStepDelayMs: number;
    /**
     * The streaming demo mode: milliseconds each generated token waits before the next is
     * decoded, so that an answer of a model too small to watch (the generated demo model decodes
     * 1,800 tokens a second on 2 cores) streams at a pace a person, or a test, can follow. 0 (the
     * default) waits not at all.
     */
    readonly tokenDelayMs: number;
    /**
     * Where workspaces that keep their KV on disk (a turn's `keepKvOnDisk`) keep it, and the
     * AES-256-GCM key, base64, that seals it (host: a 0600 key file headless, the OS keychain
     * through Electron's safeStorage in the app). Absent: no KV ever touches a disk.
     */
    readonly kvDisk?: { readonly directory: string; readonly key: string };
}

/** The demo mode's longest pause per handoff step: long enough to watch, short of a request's timeouts. */
export const MAX_HANDOFF_STEP_DELAY_MS = 5_000;

/** The streaming demo's longest pause per token: slower than reading already. */
export const MAX_TOKEN_DELAY_MS = 1_000;

/** The smallest prefill chunk: llama.cpp's CPU flash attention takes its tiled path from 64 tokens a sequence (GGML_FA_TILE_Q). */
export const MIN_PREFILL_CHUNK_TOKENS = 64;

/** The most tokens a draft model drafts ahead of one step: a verification batch beyond it costs more than it can save. */
export const MAX_DRAFT_TOKENS = 64;

export type EngineConfigInput = Pick<EngineConfig, "modelPath"> & Partial<Omit<EngineConfig, "modelPath">>;

export class EngineConfigError extends KvaultError {
    readonly code = "invalid_engine_config";
}

/** Validates once, at the edge, then freezes. */
export function resolveEngineConfig(input: EngineConfigInput): EngineConfig {
    const given = stripUndefined(input);
    const numDecodeSequences = given.numDecodeSequences ?? engineDefaults.numDecodeSequences;
    const config: EngineConfig = {
        ...engineDefaults,
        numPrefillSequences: numDecodeSequences,
        ...given,
        modelPath: input.modelPath
    };
    const counts = [
        "window",
        "prefillContextSize",
        "numPrefillSequences",
        "decodeContextSize",
        "numDecodeSequences",
        "pageTokens",
        "numPages"
    ] as const;
    for (const field of counts) {
        const value = config[field];
        if (!Number.isSafeInteger(value) || value < 1) {
            throw new EngineConfigError(`${field} is ${value}; it must be a whole number of at least 1.`);
        }
    }
    if (!Number.isSafeInteger(config.inPlacePrefillTokens) || config.inPlacePrefillTokens < 0) {
        throw new EngineConfigError(`inPlacePrefillTokens is ${config.inPlacePrefillTokens}; it must be a whole number of at least 0.`);
    }
    if (!Number.isSafeInteger(config.prefillChunkTokens) || config.prefillChunkTokens < MIN_PREFILL_CHUNK_TOKENS) {
        throw new EngineConfigError(
            `prefillChunkTokens is ${config.prefillChunkTokens}; it must be a whole number of at least ${MIN_PREFILL_CHUNK_TOKENS} ` +
                "(llama.cpp's CPU flash attention computes fewer tokens a sequence one query at a time)."
        );
    }
    if (
        !Number.isSafeInteger(config.handoffStepDelayMs) ||
        config.handoffStepDelayMs < 0 ||
        config.handoffStepDelayMs > MAX_HANDOFF_STEP_DELAY_MS
    ) {
        throw new EngineConfigError(
            `handoffStepDelayMs is ${config.handoffStepDelayMs}; it must be a whole number of milliseconds from 0 to ${MAX_HANDOFF_STEP_DELAY_MS}.`
        );
    }
    if (!Number.isSafeInteger(config.tokenDelayMs) || config.tokenDelayMs < 0 || config.tokenDelayMs > MAX_TOKEN_DELAY_MS) {
        throw new EngineConfigError(
            `tokenDelayMs is ${config.tokenDelayMs}; it must be a whole number of milliseconds from 0 to ${MAX_TOKEN_DELAY_MS}.`
        );
    }
    if (config.gpu !== "auto" && config.gpu !== false && !gpuBackendNames.includes(config.gpu)) {
        throw new EngineConfigError(
            `gpu is "${String(config.gpu)}"; use "auto", ${gpuBackendNames.map((name) => `"${name}"`).join(", ")} or false (the CPU).`
        );
    }
    if (config.gpuLayers !== undefined && (!Number.isSafeInteger(config.gpuLayers) || config.gpuLayers < 0)) {
        throw new EngineConfigError(
            `gpuLayers is ${config.gpuLayers}; it must be a whole number of layers of at least 0, or left out for node-llama-cpp's choice.`
        );
    }
    if (config.mode !== "split" && config.mode !== "unified") {
        throw new EngineConfigError(`mode is "${String(config.mode)}"; use "split" or "unified".`);
    }
    if (config.speculation !== undefined && config.speculation !== "input-lookup" && config.speculation !== "draft-model") {
        throw new EngineConfigError(
            `speculation is "${String(config.speculation)}"; use "input-lookup" or "draft-model", or leave it out for none.`
        );
    }
    if (config.speculation === "draft-model" && (typeof config.draftModelPath !== "string" || config.draftModelPath === "")) {
        throw new EngineConfigError(
            'speculation is "draft-model" but draftModelPath is empty; give the path of the draft model\'s GGUF file.'
        );
    }
    if (config.speculation !== "draft-model" && config.draftModelPath !== undefined) {
        throw new EngineConfigError(
            `draftModelPath is given but speculation is ${config.speculation === undefined ? "off" : `"${config.speculation}"`}; ` +
                'set speculation to "draft-model" to use it, or leave draftModelPath out.'
        );
    }
    if (!Number.isSafeInteger(config.draftMaxTokens) || config.draftMaxTokens < 1 || config.draftMaxTokens > MAX_DRAFT_TOKENS) {
        throw new EngineConfigError(
            `draftMaxTokens is ${config.draftMaxTokens}; it must be a whole number of tokens from 1 to ${MAX_DRAFT_TOKENS}.`
        );
    }
    if (typeof config.draftMinConfidence !== "number" || !(config.draftMinConfidence >= 0 && config.draftMinConfidence <= 1)) {
        throw new EngineConfigError(`draftMinConfidence is ${config.draftMinConfidence}; it must be a probability from 0 to 1.`);
    }
    if (!isKvCacheType(config.kvCacheType)) {
        throw new EngineConfigError(`kvCacheType is "${String(config.kvCacheType)}"; use one of ${kvCacheTypes.join(", ")}.`);
    }
    if (config.kvCacheType !== "f16" && config.flashAttention !== true) {
        throw new EngineConfigError(
            `kvCacheType ${config.kvCacheType} needs flash attention, which is off: llama.cpp keeps V transposed without it, ` +
                "one element per position, and a quantized block spans 32 values. Turn flash attention on, or use kvCacheType f16."
        );
    }
    if (config.onWindowAboveCapacity !== "clamp" && config.onWindowAboveCapacity !== "refuse") {
        throw new EngineConfigError(`onWindowAboveCapacity is "${String(config.onWindowAboveCapacity)}"; use "clamp" or "refuse".`);
    }
    if (config.stateRoot !== undefined && (typeof config.stateRoot !== "string" || config.stateRoot === "")) {
        throw new EngineConfigError(
            `stateRoot is ${JSON.stringify(config.stateRoot)}; give the path of a directory, or leave it out for /dev/shm.`
        );
    }
    if (config.kvDisk !== undefined) {
        const { directory, key } = config.kvDisk as { directory?: unknown; key?: unknown };
        if (
            typeof directory !== "string" ||
            directory === "" ||
            typeof key !== "string" ||
            Buffer.from(key, "base64").length !== DISK_KV_KEY_BYTES
        ) {
            throw new EngineConfigError(
                `kvDisk needs a directory and a key of ${DISK_KV_KEY_BYTES} bytes in base64; leave it out to keep no KV on disk.`
            );
        }
    }
    if (config.llamaBinary !== "auto" && config.llamaBinary !== "prebuilt") {
        throw new EngineConfigError(`llamaBinary is "${String(config.llamaBinary)}"; use "auto" or "prebuilt".`);
    }
    if (config.stateExchange !== "auto" && config.stateExchange !== "file") {
        throw new EngineConfigError(`stateExchange is "${String(config.stateExchange)}"; use "auto" or "file".`);
    }
    if (typeof config.modelPath !== "string" || config.modelPath === "") {
        throw new EngineConfigError("modelPath is empty; give the path of a GGUF file.");
    }
    return Object.freeze(config);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
    return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

/** The configured window exceeds what the contexts and pool that exist can hold, and clamping was not allowed. */
export class CapacityConfigError extends KvaultError {
    readonly code = "window_above_capacity";
}
