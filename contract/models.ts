// What the model manager shows about a GGUF file before it is loaded (contract/rpc.ts inspectModel),
// read from the file's header by host/models/inspectModelFile.ts.

/**
 * The types the engine can keep the K and V caches in (engine/codec/kvCacheTypes.ts): F16, or
 * blocks of 32 values in 34 bytes (Q8_0) or 18 (Q4_0), which need flash attention.
 */
export const kvCacheTypes = ["f16", "q8_0", "q4_0"] as const;

export type KvCacheType = (typeof kvCacheTypes)[number];

/** Memory to load the model and one context of `contextSize` tokens, from node-llama-cpp's GgufInsights. */
export interface ModelMemoryEstimate {
    readonly contextSize: number;
    /** Sequences the context holds (the engine's decode sequences). */
    readonly sequences: number;
    /** The KV cache alone: kvBytesPerToken × contextSize × sequences. */
    readonly kvCacheBytes: number;
    /** Every layer on the CPU: host RAM for the weights and the context. */
    readonly cpu: { readonly ramBytes: number };
    /** Every layer offloaded to a GPU: what stays in host RAM, and what the GPU needs. */
    readonly gpu: { readonly ramBytes: number; readonly vramBytes: number };
}

export interface ModelFacts {
    /** The path as given. */
    readonly path: string;
    readonly fileName: string;
    readonly fileBytes: number;
    /** `general.name`, when the file has one. */
    readonly name: string | undefined;
    /** `general.architecture`, e.g. "llama". */
    readonly architecture: string;
    /** Parameters counted from the tensors; undefined when the file does not say. */
    readonly parameterCount: number | undefined;
    /** The quantisation (`general.file_type`), e.g. "MOSTLY_Q4_K_M"; undefined when the file does not say. */
    readonly fileType: string | undefined;
    /** The context length the model was trained with; undefined when the file does not say. */
    readonly trainContextSize: number | undefined;
    readonly numLayers: number;
    /** K and V of every layer for one token, F16: layers × (n_embd_k_gqa + n_embd_v_gqa) × 2 bytes. */
    readonly kvBytesPerToken: number;
    /**
     * The same in each KV cache type (Q8_0: 34 bytes per 32 values, Q4_0: 18); undefined for a
     * type the heads are not a whole number of blocks of, which the engine refuses.
     */
    readonly kvBytesPerTokenByType: Readonly<Record<KvCacheType, number | undefined>>;
    /**
     * Attention heads, from the header (the first layer's where the file gives a list): Q heads,
     * KV heads (fewer with grouped-query attention) and the widths of one K and one V head, in
     * values. Undefined when the header gives no head count.
     */
    readonly heads:
        | { readonly numHeads: number; readonly numKvHeads: number; readonly kHeadSize: number; readonly vHeadSize: number }
        | undefined;
    /** `<arch>.attention.sliding_window` in tokens, when the file has one (whether llama.cpp uses it is `memory`'s business). */
    readonly slidingWindow: number | undefined;
    /** RAM of the machine that inspected the file (the one Kvault runs on), for reading `estimate` against. */
    readonly machineRamBytes: number;
    /** Whether pages can hold its memory (split mode); otherwise the engine runs unified, for `reason`. */
    readonly memory: { readonly plainKvCache: true } | { readonly plainKvCache: false; readonly reason: string };
    /** Undefined when node-llama-cpp could not estimate this architecture. */
    readonly estimate: ModelMemoryEstimate | undefined;
}

/** What `switchModel` takes besides a path: the built-in demo model, generated on first use. */
export const DEMO_MODEL = "tiny";

export type ModelDownloadState = "downloading" | "done" | "failed" | "cancelled";

/** One model download the host runs into its models directory (contract/rpc.ts startDownload). */
export interface ModelDownload {
    readonly id: string;
    /** The URL or `hf:` reference as given. */
    readonly source: string;
    /** Where the file goes (or went), on the host; empty until the name is known. */
    readonly path: string;
    readonly state: ModelDownloadState;
    readonly downloadedBytes: number;
    /** 0 until the server says. */
    readonly totalBytes: number;
    /** Over the last few seconds; 0 when not downloading. */
    readonly bytesPerSecond: number;
    /** Why it failed; only for state "failed". */
    readonly error: { readonly code: string; readonly message: string } | undefined;
    /**
     * A failed download whose partial file is kept: resumeDownload continues from `keptBytes`
     * (HTTP Range requests), after checking that the file on the server is still the same.
     */
    readonly resumable: boolean;
    /**
     * Bytes of the partial file a resume keeps. node-llama-cpp's downloader (ipull) records whole
     * 5 MiB chunks, so this can be less than downloadedBytes; 0 when not resumable.
     */
    readonly keptBytes: number;
    /** Something the user should know that is not a failure, e.g. why a resume started again from zero. */
    readonly notice: string | undefined;
}

/** Where a library entry came from: a GGUF the user opened by path, or one Kvault downloaded (and so may delete). */
export type LibraryModelOrigin = "opened" | "downloaded";

/**
 * A model the host remembers (contract/rpc.ts listModels): every GGUF opened by path or
 * downloaded, with the facts its header gave when it was added or last used.
 * Its GGUF facts are ModelFacts' fields of the same names.
 */
export interface LibraryModel
    extends Pick<
        ModelFacts,
        | "fileName"
        | "name"
        | "architecture"
        | "parameterCount"
        | "fileType"
        | "trainContextSize"
        | "numLayers"
        | "kvBytesPerToken"
        | "fileBytes"
    > {
    readonly id: string;
    /** Absolute path on the host. */
    readonly path: string;
    readonly origin: LibraryModelOrigin;
    /** The URL or `hf:` reference it was downloaded from; undefined for an opened file. */
    readonly source: string | undefined;
    /** engine/model/modelFingerprint.ts: 16 hex digits over the size, the first MiB and 16 samples of the weights. */
    readonly fingerprint: string;
    /** ISO 8601. */
    readonly addedAt: string;
    readonly lastUsedAt: string;
    /** The file is not on disk (any more); the entry stays until the user forgets it. */
    readonly missing: boolean;
}

/** Something wrong with the library file that the host set aside instead of failing, e.g. a corrupt models.json. */
export interface LibraryProblem {
    readonly code: string;
    readonly message: string;
    /** Where the damaged file was copied to, if it was. */
    readonly copy: string | undefined;
}

export interface ModelLibraryListing {
    /** Most recently used first. */
    readonly models: readonly LibraryModel[];
    /** Since the host started. */
    readonly problems: readonly LibraryProblem[];
}

/** A local model a workspace can choose (rpcSpec `listLocalModels`): the host's own, or one found on disk. */
export interface LocalModelChoice {
    /** The name the API and WorkspaceMeta.localModel use. */
    readonly id: string;
    /** "own" for the host's own model; else where it was found (LM Studio's, Ollama's, Hugging Face's folders, a models folder). */
    readonly source: string;
    readonly loaded: boolean;
}

/** The local models a workspace can choose; `several` is false where the host runs one model (then only its own is listed). */
export interface LocalModelList {
    readonly several: boolean;
    readonly models: readonly LocalModelChoice[];
}
