import { afterEach, describe, expect, it, vi } from "vitest";
import { bytesPerToken } from "../../../../engine/codec/KvLayout.js";
import { requestId, workspaceId } from "../../../../engine/core/ids.js";
import { createEngineCounters } from "../../../../engine/engineTypes.js";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import { GrammarBudgetError, MAX_GRAMMAR_TOKEN_MS } from "../../../../engine/request/GrammarBudgetError.js";
import { RequestRecord } from "../../../../engine/request/RequestRecord.js";
import { runDecode } from "../../../../engine/request/runDecode.js";
import type { SamplingOptions } from "../../../../engine/runtime/SequenceSlot.js";
import { FAKE_LAYOUT, FakeSequenceSlot } from "../../../support/FakeRoleContext.js";

// A slot whose third token takes longer than a grammar's budget (the clock is vitest's, advanced
// by the slot), as a token of an over-ambiguous grammar does natively.
class SlowThirdTokenSlot extends FakeSequenceSlot {
    override async *generate(tokens: readonly number[], sampling: SamplingOptions): AsyncGenerator<number, "eog" | "stopped", void> {
        let step = 0;
        for await (const token of super.generate(tokens, sampling)) {
            if (++step === 3) {
                vi.advanceTimersByTime(MAX_GRAMMAR_TOKEN_MS + 1_000);
            }
            yield token;
        }
        return "stopped";
    }
}

function decode(sampling: SamplingOptions) {
    const pool = new PagePool({ numPages: 8, pageTokens: 16, pageBytes: 16 * bytesPerToken(FAKE_LAYOUT) });
    const record = new RequestRecord(requestId("r1"), workspaceId("alice"), pool, { onTerminal: () => undefined });
    const slot = new SlowThirdTokenSlot(0, 64);
    const timings = { prefillMs: 0, handoffMs: 0, timeToFirstTokenMs: 0, decodeMs: 0 };
    const input = { workspace: workspaceId("alice"), promptTokens: [1, 2, 3], maxTokens: 8, sampling };
    return { record, run: runDecode(record, slot, [1, 2, 3], input, timings, 0, createEngineCounters(), 0) };
}

describe("a grammar's token budget", () => {
    afterEach(() => {
        vi.useRealTimers();
    });

    it("ends a turn held to a grammar whose token took longer than the budget, naming the token, the time and what to do", async () => {
        vi.useFakeTimers({ toFake: ["performance"] });
        const { run } = decode({ temperature: 0, grammar: { kind: "json" } });
        const error = await run.catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(GrammarBudgetError);
        expect(error).toMatchObject({ code: "grammar_budget_exceeded", numTokens: 2, budgetMs: MAX_GRAMMAR_TOKEN_MS });
        expect((error as Error).message).toContain("for token 3 (at most 5 s a token)");
        expect((error as Error).message).toContain("different starts");
    });

    it("leaves a turn without a grammar to its own pace", async () => {
        vi.useFakeTimers({ toFake: ["performance"] });
        const { run } = decode({ temperature: 0 });
        expect((await run).tokens).toHaveLength(8);
    });
});
