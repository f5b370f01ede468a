import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel } from "node-llama-cpp";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { LlamaRoleContext } from "../../engine/runtime/LlamaRoleContext.js";
import type { LlamaSequenceSlot } from "../../engine/runtime/LlamaSequenceSlot.js";
import { PrivateStateDirectory } from "../../engine/runtime/PrivateStateDirectory.js";
import { FileStateExchange } from "../../engine/runtime/FileStateExchange.js";
import { generatedModelPath } from "../support/generatedModels.js";

// Speculative decoding by input lookup must change how fast tokens come, never which: greedy output
// with the token predictor is the same, token for token, as without it, on a prompt that quotes itself.

const PROMPT = "The pages are sealed, verified and scrubbed. The pages are sealed, verified and scrubbed. The pages are";
const NUM_TOKENS = 48;

async function greedy(context: LlamaRoleContext, tokens: readonly number[]): Promise<{ tokens: number[]; slot: LlamaSequenceSlot }> {
    const slot = context.acquireSequence() as LlamaSequenceSlot;
    const out: number[] = [];
    for await (const token of slot.generate(tokens, { temperature: 0 })) {
        out.push(token);
        if (out.length >= NUM_TOKENS) {
            break;
        }
    }
    return { tokens: out, slot };
}

describe("speculative decoding by input lookup", () => {
    let runtime: LlamaRuntime;
    let model: LlamaModel;
    let stateDirectory: PrivateStateDirectory;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false });
        model = await runtime.loadModel(generatedModelPath("tiny"));
        stateDirectory = PrivateStateDirectory.create();
    });
    afterAll(async () => {
        stateDirectory.dispose();
        await model.dispose();
        await runtime.dispose();
    });

    it.each([false, true])(
        "gives the same greedy tokens as plain decoding (flash attention %s), its drafts counted",
        async (flashAttention) => {
            const prompt = model.tokenize(PROMPT);
            const create = (speculation: "input-lookup" | undefined): Promise<LlamaRoleContext> =>
                LlamaRoleContext.create(
                    model,
                    { role: "unified", contextSize: 256, numSequences: 2, flashAttention, speculation },
                    new FileStateExchange(stateDirectory)
                );
            const plain = await create(undefined);
            const speculative = await create("input-lookup");
            try {
                const expected = await greedy(plain, prompt);
                const drafted = await greedy(speculative, prompt);
                expect(drafted.tokens).toEqual(expected.tokens);
                expect(expected.slot.tokenPredictions).toEqual({ validated: 0, refuted: 0 });
                const { validated, refuted } = drafted.slot.tokenPredictions;
                expect(validated + refuted).toBeGreaterThan(0);
            } finally {
                await plain.dispose();
                await speculative.dispose();
            }
        }
    );
});
