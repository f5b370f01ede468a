import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KvEngine } from "../../../engine/KvEngine.js";
import { RequestCancelledError } from "../../../engine/request/requestErrors.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { alice, bob, expectEngineClean, promptOf, startTinyEngine } from "../../support/engineFixtures.js";

// The streaming demo mode (EngineConfig.tokenDelayMs, serve's --stream-demo): each token waits
// before the next is decoded, so a model too small to watch streams at a pace a person or a test
// can follow; the tokens themselves are the ones an unpaced engine generates.

const DELAY_MS = 40;
const NUM_TOKENS = 6;

describe("the streaming demo mode", () => {
    let runtime: LlamaRuntime;
    let paced: KvEngine;
    let unpaced: KvEngine;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        paced = await startTinyEngine(runtime, { tokenDelayMs: DELAY_MS });
        unpaced = await startTinyEngine(runtime);
    });
    afterAll(async () => {
        await paced.dispose();
        await unpaced.dispose();
        await runtime.dispose();
    });

    it("waits at least the delay between tokens and generates the unpaced engine's very tokens", async () => {
        const prompt = promptOf(paced, 30, "A demo answer streams at reading pace. ");
        const arrivals: number[] = [];
        const result = await paced.generate({
            workspace: alice,
            promptTokens: prompt,
            maxTokens: NUM_TOKENS,
            onToken: () => void arrivals.push(performance.now())
        });
        const reference = await unpaced.generate({ workspace: alice, promptTokens: prompt, maxTokens: NUM_TOKENS });
        expect(result.tokens).toEqual(reference.tokens);
        expect(arrivals).toHaveLength(NUM_TOKENS);
        const gaps = arrivals.slice(1).map((at, index) => at - arrivals[index]!);
        // a timer may fire up to a millisecond early (rounding), never a step of the delay early
        expect(Math.min(...gaps)).toBeGreaterThanOrEqual(DELAY_MS - 2);
        await expectEngineClean(paced);
    });

    it("still ends a cancelled answer within a step", async () => {
        const controller = new AbortController();
        const answer = paced.generate({
            workspace: bob,
            promptTokens: promptOf(paced, 30, "A long demo answer, cancelled. "),
            maxTokens: 200,
            signal: controller.signal,
            onToken: (_token) => {
                controller.abort();
                return undefined;
            }
        });
        await expect(answer).rejects.toBeInstanceOf(RequestCancelledError);
        await expectEngineClean(paced);
    });
});
