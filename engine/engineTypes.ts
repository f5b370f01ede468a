import type { TurnListener } from "../contract/turnEvents.js";
import type { DiskKvRestore } from "./workspace/DiskKvStore.js";
import type { PageHolder, RequestId, WorkspaceId } from "./core/ids.js";
import type { EngineMode } from "./EngineConfig.js";
import type { PageManifest } from "./handoff/PageManifest.js";
import type { PagePool } from "./pages/PagePool.js";
import type { Reservation } from "./pages/Reservation.js";
import type { MeasuredCapacities, RequestLimit } from "./request/admission.js";
import type { RequestStatus } from "./request/RequestStatus.js";
import type { DraftCounts, SamplingOptions, TokenProbabilities } from "./runtime/SequenceSlot.js";

// What KvEngine takes and gives: its requests, results, reports, counters and test hooks.

export interface GenerateRequest {
    readonly workspace: WorkspaceId;
    /** The host's `requestId`, when a host sent the request: the request runs under it, and replay finds it by it. */
    readonly requestId?: RequestId;
    readonly promptTokens: readonly number[];
    readonly maxTokens: number;
    readonly sampling?: SamplingOptions;
    readonly signal?: AbortSignal;
    /** Each generated token as it comes (with its probabilities when `logprobs` asks); returning "stop" ends the request normally (a stop string was seen). */
    readonly onToken?: (token: number, probabilities?: TokenProbabilities) => void | "stop";
    /** Report each generated token's probability and its `top` most likely alternatives. */
    readonly logprobs?: { readonly top: number };
    /**
     * Hears the request's `queued` (it must wait: its 1-based place) and `started` (it has its
     * decode sequence), under its id; its text is its caller's to tell (EngineService.chat).
     */
    readonly listener?: TurnListener;
    /**
     * The workspace keeps its KV on disk (needs the engine's `kvDisk`): a turn that starts with
     * nothing resident loads it instead of prefilling, and a finished turn writes it back.
     */
    readonly keepKvOnDisk?: boolean;
}

export interface GenerateResult {
    readonly request: RequestId;
    readonly tokens: readonly number[];
    readonly finishReason: "stop" | "length";
    /** Prompt tokens the workspace's KV already held: not evaluated again. */
    readonly numReusedTokens: number;
    /** Prompt tokens evaluated for this request, in the decode context or by prefill. */
    readonly numEvaluatedTokens: number;
    /** Prompt tokens evaluated by prefill and handed off through pages (0 when evaluated in place). */
    readonly numHandedOffTokens: number;
    /** Tokens speculative decoding drafted for this request, by whether the model confirmed them (0s without speculation). */
    readonly drafts: DraftCounts;
    readonly timings: RequestTimings;
    /** What the turn's start found on disk for a workspace that keeps its KV there; absent when it looked for none. */
    readonly diskKv?: DiskKvRestore;
}

/** Milliseconds, from `performance.now()`. */
export interface RequestTimings {
    /** Prefill evaluation of the handed-off prompt (0 in unified mode). */
    prefillMs: number;
    /** Export, page writes and seals, verification, assembly and load into decode (0 in unified mode). */
    handoffMs: number;
    /** From admission to the first generated token. */
    timeToFirstTokenMs: number;
    /** From the first generated token to the last. */
    decodeMs: number;
}

/** The window as configured and as served, and which measured capacity set it. */
export interface WindowReport extends RequestLimit {
    readonly configured: number;
    readonly clamped: boolean;
    readonly capacities: MeasuredCapacities;
}

/** The mode asked for and the mode running; they differ when the model's memory cannot be paged. */
export interface ModeReport {
    readonly requested: EngineMode;
    readonly effective: EngineMode;
    /** Why the engine runs unified although split was asked for: shown to the user. */
    readonly reason?: string;
}

/** The engine's counters, all from zero. */
export function createEngineCounters(): EngineCounters {
    return {
        finished: 0,
        rejected: 0,
        cancelled: 0,
        failed: 0,
        integrityFailures: 0,
        swapOuts: 0,
        swapIns: 0,
        swapDrops: 0,
        generatedTokens: 0,
        evaluatedPromptTokens: 0,
        reusedPromptTokens: 0,
        validatedDraftTokens: 0,
        refutedDraftTokens: 0,
        staleCompletionsIgnored: 0,
        statesSavedIntoPages: 0
    };
}

export interface EngineCounters {
    finished: number;
    rejected: number;
    cancelled: number;
    failed: number;
    integrityFailures: number;
    swapOuts: number;
    swapIns: number;
    /** Swapped workspaces whose pages were taken back for lack of room; they recompute from history. */
    swapDrops: number;
    generatedTokens: number;
    evaluatedPromptTokens: number;
    reusedPromptTokens: number;
    /** Tokens speculative decoding drafted that the model's own choice confirmed, and those it did not. */
    validatedDraftTokens: number;
    refutedDraftTokens: number;
    /** Replayed completions (docs/FAILURE-MODES.md): late or duplicate ones a reader ignored by their generation tag. */
    staleCompletionsIgnored: number;
    /** Transfers whose state llama.cpp saved straight into the pages (the others were exported whole and copied in). */
    statesSavedIntoPages: number;
}

/**
 * Test and drill hooks. They run at the points the failure modes of this class strike
 * (docs/FAILURE-MODES.md); production passes none. Hooks change nothing by themselves: what they
 * provoke, the guards must catch.
 */
export interface KvEngineHooks {
    /** Called after the write leases are taken and before the bytes are written: a slow transport. */
    beforeTransferWrite?(holder: PageHolder): Promise<void>;
    /** Called with the manifest as prefill sealed it; what it returns is what decode receives. */
    afterSeal?(manifest: PageManifest, pool: PagePool): PageManifest | void;
    /** After a handed-off state was loaded into its target sequence, with the tokens it holds now. */
    afterLoad?(request: RequestId, tokens: readonly number[]): void;
    /** How many of a transfer's pages, from the first, the transport delivers (all when absent): a lossy transport. */
    pagesDelivered?(reservation: Reservation, numPages: number): number;
    /** Completions that reach a transfer's reader before its own: late or duplicate ones of earlier transfers. */
    earlierArrivals?(own: PageManifest): readonly PageManifest[] | void;
    onStatus?(request: RequestId, status: RequestStatus): void;
    /** A workspace's KV could not be written to disk (`what` says why): it stays in memory, and a restart recomputes it. */
    onDiskKv?(workspace: WorkspaceId, what: string): void;
}

/** A finished request's first divergence from its replay alone in a fresh context, if any. */
export interface ReplayResult {
    readonly request: RequestId;
    readonly numTokens: number;
    readonly identical: boolean;
    readonly firstDivergence?: { readonly index: number; readonly served: number; readonly replayed: number | undefined };
    readonly durationMs: number;
}
