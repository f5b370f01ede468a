import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KvEngine } from "../../../engine/KvEngine.js";
import { workspaceId } from "../../../engine/core/ids.js";
import { specialTokens } from "../../../synthetic/model/syntheticVocabulary.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { expectEngineClean, promptOf, startTinyEngine } from "../../support/engineFixtures.js";

// OpenAI's logit_bias on an end-of-generation token: node-llama-cpp's TokenBias skips such tokens
// without a word, so the engine sets their bias itself. The tiny model's end-of-generation tokens
// are </s> and <|im_end|>.

const END_TOKENS: readonly number[] = [specialTokens.eos.id, specialTokens.imEnd.id];
const MAX_TOKENS = 100;

describe("a token bias on the end-of-generation tokens", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    let numRequests = 0;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        engine = await startTinyEngine(runtime);
    });
    afterAll(async () => {
        await engine.dispose();
        await runtime.dispose();
    });

    const answer = (bias: number | undefined) =>
        engine.generate({
            workspace: workspaceId(`eog-bias-${numRequests++}`),
            // greedy, this prompt's answer ends by itself within MAX_TOKENS (the witness, asserted below)
            promptTokens: promptOf(engine, 20, "Stream 0 goes on and on. "),
            maxTokens: MAX_TOKENS,
            sampling: { temperature: 0, ...(bias !== undefined && { tokenBias: END_TOKENS.map((token) => ({ token, bias })) }) }
        });

    it("keeps the answer going at -100 and ends it at once at +100", async () => {
        const plain = await answer(undefined);
        expect(plain.finishReason, "the unbiased answer ends by itself, the witness").toBe("stop");
        expect(plain.tokens.length).toBeLessThan(MAX_TOKENS);

        const kept = await answer(-100);
        expect(kept.finishReason).toBe("length");
        expect(kept.tokens).toHaveLength(MAX_TOKENS);
        expect(kept.tokens.slice(0, plain.tokens.length), "the same greedy answer up to where it ended").toEqual(plain.tokens);
        expect(kept.tokens.some((token) => END_TOKENS.includes(token))).toBe(false);

        const ended = await answer(100);
        expect(ended).toMatchObject({ finishReason: "stop", tokens: [] });
        await expectEngineClean(engine);
    });
});
