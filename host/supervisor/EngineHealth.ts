import type { EngineErrorPayload } from "../../contract/engineProtocol.js";
import { MAX_GRAMMAR_TOKEN_MS } from "../../contract/grammarTokenBudget.js";
import type { KvaultError } from "../../engine/index.js";

/** The supervisor's own life cycle (EngineSupervisor.state). */
export type EngineSupervisorState = "running" | "restarting" | "down" | "disposed";

/**
 * What `/health` reports of the engine. `ready` and `busy` serve (busy: turns are running, new ones
 * queue); `starting`, `restarting` (after a crash, a missed liveness ping, or during a model switch)
 * and `failed` (the restart budget is spent, or the engine was shut down) cannot.
 */
export type EngineHealthState = "starting" | "ready" | "busy" | "restarting" | "failed";

export interface EngineHealth {
    readonly state: EngineHealthState;
    /** One sentence for a person: why this state, with the numbers, and what happens next. */
    readonly reason: string;
    /** Set when `failed`: the error every call gets until the host is restarted. */
    readonly error?: EngineErrorPayload;
    /** Set when a turn held to a grammar has waited past MAX_GRAMMAR_TOKEN_MS for a token: how long, in ms. */
    readonly grammarWaitMs?: number;
}

/** Whether the engine takes requests now: `/health` answers 200 for these, 503 otherwise. */
export function canServe(state: EngineHealthState): boolean {
    return state === "ready" || state === "busy";
}

/** The supervisor's state as `/health` says it. */
export function describeHealth(now: {
    readonly state: EngineSupervisorState;
    /** Why it is down, once it is. */
    readonly downError: KvaultError | undefined;
    /** Why it is restarting, while it is. */
    readonly restartReason: string | undefined;
    readonly pid: number | undefined;
    readonly numTurns: number;
    /** The longest a turn held to a grammar has waited for its next token (EngineConnection). */
    readonly longestGrammarWaitMs?: number;
}): EngineHealth {
    switch (now.state) {
        case "disposed":
            return { state: "failed", reason: "The engine was shut down; restart Kvault to use it again." };
        case "down": {
            const error = now.downError;
            return error === undefined
                ? { state: "failed", reason: "The engine is down; restart Kvault." }
                : { state: "failed", reason: error.message, error: { code: error.code, message: error.message } };
        }
        case "restarting":
            return { state: "restarting", reason: now.restartReason ?? "The engine is restarting; try again in a moment." };
        case "running": {
            const waitMs = now.longestGrammarWaitMs ?? 0;
            if (now.numTurns > 0 && waitMs > MAX_GRAMMAR_TOKEN_MS) {
                return {
                    state: "busy",
                    reason:
                        `Engine process ${now.pid} is running ${now.numTurns} turn(s); one held to a grammar has waited ${(waitMs / 1000).toFixed(1)} s for a token, ` +
                        `past the ${MAX_GRAMMAR_TOKEN_MS / 1000} s a token may take: every stream of its context waits for that token, and the turn ends with grammar_budget_exceeded when it comes.`,
                    grammarWaitMs: Math.round(waitMs)
                };
            }
            return now.numTurns > 0
                ? { state: "busy", reason: `Engine process ${now.pid} is running ${now.numTurns} turn(s); new ones queue behind them.` }
                : { state: "ready", reason: `Engine process ${now.pid} answers its liveness pings and runs no turn.` };
        }
    }
}
