import { create } from "zustand";
import type { AuditSummary, CanaryReport, DrillDescription, DrillReport, ReplayableTurn, ReplaySummary } from "../../contract/isolation.js";

/** A failed call as the panel shows it: the engine's stable code and its message. */
export interface IsolationFailure {
    readonly code: string;
    readonly message: string;
}

/** One run of a call the user started (a replay, a drill): running, then its result or why it failed. */
export interface IsolationRun<T> {
    readonly running: boolean;
    readonly result?: T;
    readonly error?: IsolationFailure;
}

export interface IsolationState {
    /** The last audit's answer (kept while the next one runs), or why the last one failed. */
    readonly audit: {
        readonly running: boolean;
        readonly summary?: AuditSummary;
        readonly error?: IsolationFailure;
        /** When the page got the last answer (Date.now()). */
        readonly checkedAt?: number;
    };
    /** The engine's own audits, as its snapshots report them; absent while the engine runs none. */
    readonly auditFeed?: {
        readonly intervalMs: number;
        readonly numRuns: number;
        readonly numRunsWithViolations: number;
        readonly lastWithViolations?: AuditSummary;
    };
    /** The last canary run, started from this page. */
    readonly canary: IsolationRun<CanaryReport>;
    /** Finished greedy turns the engine keeps for replay, oldest first. */
    readonly replayable: { readonly turns?: readonly ReplayableTurn[]; readonly error?: IsolationFailure };
    /** By the turn's requestId. */
    readonly replays: Readonly<Record<string, IsolationRun<ReplaySummary>>>;
    readonly drills: { readonly list?: readonly DrillDescription[]; readonly error?: IsolationFailure };
    /** By drill id: the last run of each. */
    readonly drillRuns: Readonly<Record<string, IsolationRun<DrillReport>>>;
}

export type IsolationStore = ReturnType<typeof createIsolationStore>;

/**
 * What the isolation panel shows of the audit, differential replay and fault drills. Page-lifetime
 * only; written by IsolationController from the engine's answers, never edited by the UI.
 */
export function createIsolationStore() {
    return create<IsolationState>()(() => ({
        audit: { running: false },
        replayable: {},
        replays: {},
        drills: {},
        drillRuns: {},
        canary: { running: false }
    }));
}

export const useIsolationStore = createIsolationStore();
