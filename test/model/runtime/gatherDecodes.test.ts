import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaContext, LlamaModel } from "node-llama-cpp";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { LlamaSequenceSlot } from "../../../engine/runtime/LlamaSequenceSlot.js";
import { gatherDecodes } from "../../../engine/runtime/gatherDecodes.js";
import { refuseContextShift } from "../../../engine/runtime/refuseContextShift.js";
import { generatedModelPath } from "../../support/generatedModels.js";

// node-llama-cpp composes a context's next batch as soon as the last sample of the previous one is
// in, before the sequence sampled last has queued its next token, so one stream misses every batch.
// gatherDecodes keeps the generating sequences of a context in one batch a step.

const NUM_SEQUENCES = 4;
const NUM_TOKENS = 24;

describe("the generating sequences of one context", () => {
    let runtime: LlamaRuntime;
    let model: LlamaModel;
    const contexts: LlamaContext[] = [];
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false, maxThreads: 2 });
        model = await runtime.loadModel(generatedModelPath("tiny"));
    });
    afterAll(async () => {
        for (const context of contexts.splice(0)) {
            await context.dispose();
        }
        await model.dispose();
        await runtime.dispose();
    });

    /**
     * Four streams at once in a fresh context, each `NUM_TOKENS` greedy tokens after its own prompt:
     * the token count of every batch the context decoded (node-llama-cpp's initBatch), and the tokens.
     */
    async function streamTogether(gathered: boolean): Promise<{ batchSizes: number[]; tokens: number[][] }> {
        const context = await model.createContext({ contextSize: 256, sequences: NUM_SEQUENCES, flashAttention: true, threads: 2 });
        contexts.push(context);
        const batchSizes: number[] = [];
        const native = (context as unknown as { _ctx: { initBatch(size: number): void } })._ctx;
        const initBatch = native.initBatch.bind(native);
        Object.defineProperty(native, "initBatch", {
            value: (size: number) => {
                batchSizes.push(size);
                initBatch(size);
            }
        });
        const sequences = Array.from({ length: NUM_SEQUENCES }, () => context.getSequence({ contextShift: refuseContextShift }));
        const gathering = gathered ? gatherDecodes(context, sequences) : undefined;
        expect(gathering?.active ?? true, "node-llama-cpp has the members gatherDecodes needs").toBe(true);
        const tokens = await Promise.all(
            sequences.map(async (sequence, index) => {
                const slot = new LlamaSequenceSlot(sequence, index, gathering);
                const generated: number[] = [];
                const prompt = model.tokenize(`Stream ${index} of four, each its own prompt.`);
                for await (const token of slot.generate(prompt, { temperature: 0 })) {
                    generated.push(token);
                    if (generated.length === NUM_TOKENS) {
                        break;
                    }
                }
                return generated;
            })
        );
        return { batchSizes, tokens };
    }

    it("decode in one batch a step, where node-llama-cpp alone leaves one out of each", async () => {
        const own = await streamTogether(false);
        const gathered = await streamTogether(true);
        for (const run of [own, gathered]) {
            expect(run.tokens.map((tokens) => tokens.length)).toEqual(Array(NUM_SEQUENCES).fill(NUM_TOKENS));
        }
        // The four prompts go in one batch either way; then one token per stream a step.
        const decodeBatches = (sizes: number[]): number[] => sizes.filter((size) => size <= NUM_SEQUENCES);
        expect(decodeBatches(gathered.batchSizes), `gathered: ${gathered.batchSizes.join(" ")}`).toEqual(
            Array(NUM_TOKENS - 1).fill(NUM_SEQUENCES)
        );
        // node-llama-cpp's own, as measured (3.21): batches of 3, one stream a step behind. Should it
        // ever batch all four by itself, this fails, and gatherDecodes can go.
        const ownDecodes = decodeBatches(own.batchSizes);
        expect(ownDecodes.length, `own: ${own.batchSizes.join(" ")}`).toBeGreaterThan(NUM_TOKENS);
        expect(ownDecodes.filter((size) => size === NUM_SEQUENCES).length).toBeLessThan(NUM_TOKENS / 2);
    });

    it("counts a sequence while it generates, and no longer once its generation ends, by a stop or by an error", async () => {
        const context = await model.createContext({ contextSize: 256, sequences: 2, flashAttention: true, threads: 2 });
        contexts.push(context);
        const sequences = [0, 1].map(() => context.getSequence({ contextShift: refuseContextShift }));
        const gathering = gatherDecodes(context, sequences);
        const slot = new LlamaSequenceSlot(sequences[0]!, 0, gathering);
        const during: number[] = [];
        for await (const token of slot.generate(model.tokenize("One stream, stopped early."), { temperature: 0 })) {
            void token;
            during.push(gathering.numGenerating);
            if (during.length === 3) {
                break;
            }
        }
        expect(during).toEqual([1, 1, 1]);
        expect(gathering.numGenerating).toBe(0);

        // a prompt longer than the sequence holds fails inside node-llama-cpp's evaluation
        const failing = slot.generate(model.tokenize("words ".repeat(400)), { temperature: 0 });
        await expect(failing.next()).rejects.toThrow();
        expect(gathering.numGenerating).toBe(0);

        const end = gathering.generating();
        end();
        end();
        expect(gathering.numGenerating, "ending twice counts once").toBe(0);
    });
});
