// What the isolation panel shows: audits of I1–I7, differential replays (I8) and fault drills.
// Plain data, the same over the engine protocol, the RPC and the preload bridge.

export interface AuditSummary {
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

export interface DrillDescription {
    readonly id: string;
    readonly title: string;
    /** Entry numbers in shared/reference/failure-modes.md. */
    readonly failureModes: readonly number[];
    /** The guard that must catch it. */
    readonly guard: string;
}

export interface DrillReport extends DrillDescription {
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
