// What the isolation panel shows: audits of I1–I7, differential replays (I8) and fault drills.
// Plain data, the same over the engine protocol, the RPC and the preload bridge.

export interface AuditSummary {
    /** The local model audited (listLocalModels' id), set by a host that runs several; absent in one that runs one. */
    readonly model?: string;
    readonly ok: boolean;
    /** Violations found, by invariant ("I1" … "I7"), with their messages (the first 20). */
    readonly violations: readonly { readonly invariant: string; readonly message: string }[];
    readonly numViolations: number;
    readonly numPagesChecked: number;
    readonly numSealedPagesVerified: number;
    readonly numFreePagesScanned: number;
    readonly durationMs: number;
    /** Milliseconds since the engine started. */
    readonly at: number;
    /**
     * Pages the byte scan skipped because their state or generation changed between the audit's
     * start and their slice: not judged, never reported as violations.
     */
    readonly numPagesChangedDuringScan?: number;
    /** What the audit cost the engine's thread, ms; per page: `metadataMs / numPagesChecked`, `byteScanMs / pages scanned`. */
    readonly cost?: AuditCost;
}

export interface AuditCost {
    /** The metadata pass over every page (I1–I5, the engine's bookkeeping), one synchronous step. */
    readonly metadataMs: number;
    /** The byte scans' slices together (I6, I7), the yields between them excluded. */
    readonly byteScanMs: number;
    readonly numSlices: number;
    /** The longest the audit held the thread at once: what a stream's next token may wait for it. */
    readonly longestPauseMs: number;
}

/** The engine's own audits, run on a timer; it travels in every snapshot (`EngineSnapshot.audit`). */
export interface AuditFeed {
    /** Between the end of one audit and the start of the next, ms. */
    readonly intervalMs: number;
    /** Audits run since the engine started, periodic and on demand. */
    readonly numRuns: number;
    readonly numRunsWithViolations: number;
    readonly latest?: AuditSummary;
    /** The last audit that found a violation, kept so one seen between two snapshots is not lost. */
    readonly lastWithViolations?: AuditSummary;
}

/** One probe of a canary run: what it looked at, its verdict, its numbers. */
export interface CanaryProbeResult {
    readonly id: "text-recall" | "text-cue" | "logprobs" | "kv-pages" | "kv-sequence";
    readonly title: string;
    /** "skipped" when the probe cannot run on this engine (said in `evidence`). */
    readonly outcome: "passed" | "failed" | "skipped";
    /** What was seen, in words, with the numbers. */
    readonly evidence: string;
    /** The probe's figures by name (tokens looked at, matches found, log-probability lift in nats …). */
    readonly numbers: Readonly<Record<string, number>>;
}

/**
 * A canary run: unique markers at the start and end of a long prompt in temporary workspace A,
 * probes from temporary workspace B that could only find them if B saw A's KV.
 */
export interface CanaryReport {
    /** The local model probed (listLocalModels' id), set by a host that runs several; absent in one that runs one. */
    readonly model?: string;
    /** No probe failed. */
    readonly passed: boolean;
    readonly modelName: string;
    readonly markers: readonly string[];
    readonly fillerTokens: number;
    /** A's prompt, markers and filler together, in tokens. */
    readonly promptTokens: number;
    /** Pages A's prompt was handed off in (0 when it was evaluated in place, or in unified mode). */
    readonly numPagesA: number;
    readonly pageTokens: number;
    readonly probes: readonly CanaryProbeResult[];
    /** Free pages before the run and after its workspaces were forgotten. */
    readonly numFreePagesBefore: number;
    readonly numFreePagesAfter: number;
    readonly durationMs: number;
}

export interface ReplaySummary {
    /** The host's requestId of the turn replayed. */
    readonly requestId: string;
    readonly numTokens: number;
    readonly identical: boolean;
    readonly firstDivergence?: { readonly index: number; readonly served: string; readonly replayed: string };
    readonly durationMs: number;
}

/** A finished greedy turn the engine can replay. */
export interface ReplayableTurn {
    readonly requestId: string;
    readonly workspace: string;
    readonly numTokens: number;
}

/**
 * Workspace ids of a canary run begin with this. No user's workspace can: a turn naming one is
 * refused by the turn's schema (contract/rpc/turnSchemas.ts), so a canary workspace is never another's prefix cache.
 */
export const CANARY_WORKSPACE_PREFIX = "kvault-canary:";

/**
 * The failure modes of this class by slug, with the name the UI shows: each slug is the anchor of
 * its section in docs/FAILURE-MODES.md, where it was seen and which guard and tests cover it.
 */
export const failureModeNames = {
    "decode-over-stale-pages": "decode over stale pages",
    "undersized-prefill-pool": "undersized prefill pool",
    "late-write-after-cancel": "late write after cancel",
    "reuse-under-reader": "pages reused under a reader",
    "skipped-scrub": "skipped scrub",
    "foreign-manifest": "foreign manifest",
    "replayed-completion": "replayed completion (ABA)",
    "misrouted-reply": "misrouted reply after cancel",
    "read-before-ready": "read before ready",
    "wrong-conversation-restored": "wrong conversation restored",
    "shared-prefix-side-channel": "shared prefix side channel",
    "malformed-state": "malformed or foreign state",
    "flipped-byte": "flipped byte",
    "dropped-pages": "dropped pages",
    "double-release": "double release",
    "abort-reported-as-success": "abort reported as success",
    "growth-past-admission": "growth past admission",
    "over-read": "over-read",
    "poison-payload": "poison payload",
    "nondeterministic-oracle": "nondeterministic oracle"
} as const;

export type FailureModeSlug = keyof typeof failureModeNames;

export interface DrillDescription {
    readonly id: string;
    readonly title: string;
    /** The failure modes the drill provokes (docs/FAILURE-MODES.md). */
    readonly failureModes: readonly FailureModeSlug[];
    /** The guard that must catch it. */
    readonly guard: string;
}

export interface DrillReport extends DrillDescription {
    /** The local model whose engine settings the drill ran on (listLocalModels' id), set by a host that runs several. */
    readonly model?: string;
    /** With the guard on: it fired, with this error code (or the check that held). */
    readonly guardFired: boolean;
    readonly guardError: { readonly code: string; readonly message: string } | null;
    /** With the guard on: no byte of another request reached the victim's KV or output. */
    readonly victimClean: boolean;
    /** With the guard off (in the drill's sandbox only): the leak was observed, and how. */
    readonly leakObservedWithGuardOff: boolean;
    readonly leakEvidence: string;
    readonly durationMs: number;
}
