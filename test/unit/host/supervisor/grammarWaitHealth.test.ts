import { describe, expect, it } from "vitest";
import { MAX_GRAMMAR_TOKEN_MS } from "../../../../contract/grammarTokenBudget.js";
import { canServe, describeHealth } from "../../../../host/supervisor/EngineHealth.js";

describe("/health and a turn held to a grammar", () => {
    const running = { state: "running" as const, downError: undefined, restartReason: undefined, pid: 42, numTurns: 2 };

    it("names a turn that has waited past a grammar token's budget, with how long, and still serves", () => {
        const health = describeHealth({ ...running, longestGrammarWaitMs: MAX_GRAMMAR_TOKEN_MS + 25_300 });
        expect(health.state).toBe("busy");
        expect(canServe(health.state)).toBe(true);
        expect(health.grammarWaitMs).toBe(MAX_GRAMMAR_TOKEN_MS + 25_300);
        expect(health.reason).toBe(
            "Engine process 42 is running 2 turn(s); one held to a grammar has waited 30.3 s for a token, past the 5 s a token may take: " +
                "every stream of its context waits for that token, and the turn ends with grammar_budget_exceeded when it comes."
        );
    });

    it("says nothing of a grammar whose tokens come within the budget", () => {
        expect(describeHealth({ ...running, longestGrammarWaitMs: MAX_GRAMMAR_TOKEN_MS })).toEqual({
            state: "busy",
            reason: "Engine process 42 is running 2 turn(s); new ones queue behind them."
        });
    });
});
