import type { ModelFacts } from "../../contract/models.js";
import type { EngineMethod } from "../../contract/rpc/rpcSpec.js";
import type { EngineProcessSpawner } from "./EngineProcessSpawner.js";

/** Defaults in one place. Times in milliseconds; each call's deadline is the RPC spec's (rpcSpec[method].timeoutMs). */
export const supervisorDefaults = {
    /** From spawn to `ready`: loading a multi-gigabyte GGUF from a slow disk takes a while. */
    startTimeoutMs: 120_000,
    /** How long a call made while the engine restarts waits for it. */
    restartWaitMs: 120_000,
    /** From `shutdown` to SIGKILL. */
    shutdownGraceMs: 10_000,
    maxRestarts: 5,
    restartWindowMs: 60_000,
    /** Pause before the n-th restart within the window: `restartBackoffMs × 2^(n−2)` from the second on, at most 4 s. */
    restartBackoffMs: 250,
    /** Pause between one liveness ping's answer and the next. */
    pingIntervalMs: 5_000,
    /** A ping unanswered this long (three intervals) marks the engine frozen: it is killed and restarted. */
    pingDeadlineMs: 15_000
} as const;

export interface EngineSupervisorOptions {
    readonly spawner?: EngineProcessSpawner;
    readonly startTimeoutMs?: number;
    readonly restartWaitMs?: number;
    /** Deadlines other than the spec's, by method (tests of a timeout). */
    readonly callTimeoutsMs?: Partial<Readonly<Record<EngineMethod, number>>>;
    readonly shutdownGraceMs?: number;
    readonly maxRestarts?: number;
    readonly restartWindowMs?: number;
    readonly restartBackoffMs?: number;
    /** Liveness (host/supervisor/LivenessMonitor.ts): tests shorten these to see a frozen engine within a second. */
    readonly pingIntervalMs?: number;
    readonly pingDeadlineMs?: number;
    readonly log?: (line: string) => void;
    /**
     * Reads a model file's facts, or throws model_unreadable / model_not_gguf / model_unsupported.
     * By default host/models/inspectModelInChild.ts: a forked child with a memory limit and a deadline.
     */
    readonly inspectModel?: ModelInspector;
}

export type ModelInspector = (
    modelPath: string,
    estimateFor: { readonly contextSize: number; readonly sequences: number }
) => Promise<ModelFacts>;

export function stripUndefined<T extends object>(value: T): Partial<T> {
    return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
