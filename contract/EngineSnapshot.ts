// What the UI draws, pushed up to ten times a second: compact for 65,536 pages (base64 typed
// arrays, ~256 KiB for a free pool; owned pages add their details), no per-page objects. The
// sequences are a few numbers each: their page-sized blocks follow from their positions.

import type { AuditFeed } from "./isolation.js";

/** Page states, as `PageState` numbers: 0 free, 1 reserved, 2 written, 3 sealed, 4 quarantined. */
export const pageStateNames = ["free", "reserved", "written", "sealed", "quarantined"] as const;
export type PageStateName = (typeof pageStateNames)[number];

export interface PageMapSnapshot {
    readonly numPages: number;
    readonly pageTokens: number;
    readonly pageBytes: number;
    /** base64 of a Uint8Array: each page's state number. */
    readonly states: string;
    /** base64 of a little-endian Uint16Array: 0 for no owner, else `k` meaning `owners[k − 1]`. */
    readonly ownerSlots: string;
    /** Workspaces owning pages, by slot. */
    readonly owners: readonly string[];
    readonly numPagesByState: Readonly<Record<PageStateName, number>>;
    readonly numActiveLeases: number;
    /**
     * Details of every page that is not free, in page order (the `k`-th entry is the `k`-th non-free
     * page of `states`), so that a free pool costs nothing here. All base64, little-endian.
     */
    readonly ownedPages: OwnedPageDetails;
}

export interface OwnedPageDetails {
    /** Pages described: the pages of `states` that are not free. */
    readonly count: number;
    /** Uint32Array: the generation of the reservation that took the page. */
    readonly generations: string;
    /** Uint32Array: the first token position the page holds. */
    readonly tokenStarts: string;
    /** Uint16Array: token positions the page holds from its first (at most `pageTokens`). */
    readonly tokenCounts: string;
    /** Uint32Array: bytes of KV written into the page (at most `pageBytes`). */
    readonly validBytes: string;
    /** BigUint64Array: xxh64 of the page's valid bytes while it is sealed, else 0. */
    readonly checksums: string;
}

/** The handoff's steps, in order (docs/ARCHITECTURE.md, the handoff protocol). */
export const handoffStepNames = ["history to prefill", "prefilling", "sealing pages", "pages to decode"] as const;
export type HandoffStepName = (typeof handoffStepNames)[number];

/** A handoff in flight: a turn's KV on its way prefill → host pages → decode. */
export interface HandoffProgress {
    /** The workspace the turn serves. */
    readonly workspace: string;
    readonly step: HandoffStepName;
    /** The decode sequence it loads into. */
    readonly decodeSequence: number;
}

/**
 * One llama.cpp sequence of a context: the positions `[0, numTokens)` it holds, drawn as
 * `ceil(numTokens / pageTokens)` page-sized blocks (the last one partial).
 */
export interface SequenceUsage {
    readonly role: "prefill" | "decode" | "unified";
    /** Its index in its context. */
    readonly index: number;
    /** Positions it can hold. */
    readonly capacity: number;
    readonly numTokens: number;
    /** Page-sized blocks of those positions: `ceil(numTokens / pageTokens)`. */
    readonly numBlocks: number;
    /** The workspace whose KV it holds; absent while it holds none. */
    readonly workspace?: string;
    /** A turn of that workspace runs in it now (a prefill sequence in use is always running). */
    readonly running: boolean;
}

export interface WorkspaceUsage {
    readonly workspace: string;
    /** Where its KV is: in a decode sequence, swapped out into pages, or nowhere (recomputed on its next turn). */
    readonly residency: "resident" | "swapped" | "none";
    /** Decode sequence index while resident. */
    readonly sequence?: number;
    /** Tokens of KV the engine holds for it. */
    readonly heldTokens: number;
    readonly running: boolean;
    readonly numSwapOuts: number;
    readonly numSwapIns: number;
}

/**
 * Where a context's KV lives: in the GPU's memory, in RAM, or split between them by layer (llama.cpp
 * keeps an offloaded layer's KV on the device beside it, and the rest's in RAM).
 */
export interface KvMemory {
    readonly where: "device" | "ram" | "split";
    /** The model's layers (blocks, each with its KV) whose KV is in device memory, of `numLayers`. */
    readonly numLayersOnDevice: number;
    readonly numLayers: number;
}

export interface RoleOccupancy {
    readonly role: "prefill" | "decode" | "unified";
    readonly numSequences: number;
    readonly numBusySequences: number;
    /** Tokens one sequence holds, measured. */
    readonly sequenceCapacity: number;
    /** Where this context's KV lives (from the layers node-llama-cpp placed on the device). */
    readonly kvMemory: KvMemory;
}

export interface EngineSnapshot {
    /** Milliseconds since the engine started. */
    readonly at: number;
    readonly pageMap: PageMapSnapshot;
    readonly workspaces: readonly WorkspaceUsage[];
    readonly roles: readonly RoleOccupancy[];
    /** Every sequence of every context, prefill first, then decode by index. */
    readonly sequences: readonly SequenceUsage[];
    /** Bytes of KV one token position takes (a page is `pageTokens` of them). */
    readonly bytesPerToken: number;
    readonly handoffs: readonly HandoffProgress[];
    readonly capacities: {
        readonly window: number;
        readonly prefill: number;
        readonly decode: number;
        readonly pool: number;
        readonly limit: number;
    };
    readonly numQueued: number;
    readonly counters: {
        readonly requests: { readonly finished: number; readonly rejected: number; readonly cancelled: number; readonly failed: number };
        readonly integrityFailures: number;
        readonly staleWritesRefused: number;
        /** Replayed completions (docs/FAILURE-MODES.md): late or duplicate ones ignored by their (request, generation) tag. */
        readonly staleCompletionsIgnored: number;
        readonly pagesScrubbed: number;
        readonly swapOuts: number;
        readonly swapIns: number;
        readonly swapDrops: number;
        readonly generatedTokens: number;
        readonly evaluatedPromptTokens: number;
        readonly reusedPromptTokens: number;
        /** Speculative decoding's drafted tokens the model confirmed, and those it did not (0s without speculation). */
        readonly acceptedDraftTokens: number;
        readonly rejectedDraftTokens: number;
    };
    /** Generated tokens per second over the last few seconds, all workspaces together. */
    readonly tokensPerSecond: number;
    /** The engine's own audits, run on a timer: absent when it runs none (an engine in a test's process). */
    readonly audit?: AuditFeed;
}
