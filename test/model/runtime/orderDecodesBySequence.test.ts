import { describe, expect, it } from "vitest";
import { orderDecodesBySequence } from "../../../engine/runtime/orderDecodesBySequence.js";
import { refuseContextShift } from "../../../engine/runtime/refuseContextShift.js";
import { useTinyModel } from "../../support/useTinyModel.js";
import { recordBatches, type RecordedBatch } from "../../support/recordBatches.js";

// llama.cpp cuts a batch of a context with a KV stream per sequence into one graph per run of
// consecutive sequence ids in batch order; node-llama-cpp fills its batch in the order the sequences
// queued. Prompts prefilled together (the prefill context's) queued in falling order must still
// fill each batch in rising order.

const NUM_SEQUENCES = 4;
const PROMPT_TOKENS = 100;
const BATCH_SIZE = 128;

describe("prompts prefilled together in one context", () => {
    const tiny = useTinyModel(2);

    /** Four prompts of `PROMPT_TOKENS` evaluated at once, queued from the last sequence to the first. */
    async function prefillInReverse(ordered: boolean): Promise<RecordedBatch[]> {
        const context = await tiny.model.createContext({
            contextSize: 256,
            sequences: NUM_SEQUENCES,
            batchSize: BATCH_SIZE,
            flashAttention: true,
            threads: 2
        });
        tiny.track(context);
        expect(!ordered || orderDecodesBySequence(context), "node-llama-cpp has the queue orderDecodesBySequence orders").toBe(true);
        const batches = recordBatches(context);
        const sequences = Array.from({ length: NUM_SEQUENCES }, () => context.getSequence({ contextShift: refuseContextShift }));
        const words = tiny.model.tokenize("word ".repeat(PROMPT_TOKENS * 2)).slice(0, PROMPT_TOKENS);
        expect(words).toHaveLength(PROMPT_TOKENS);
        await Promise.all(
            sequences
                .map((sequence, index) => ({ sequence, index }))
                .reverse()
                .map(({ sequence, index }) => sequence.evaluateWithoutGeneratingNewTokens([words[index]!, ...words.slice(1)]))
        );
        for (const sequence of sequences) {
            expect(sequence.nextTokenIndex).toBe(PROMPT_TOKENS);
        }
        return batches;
    }

    const describeBatches = (batches: RecordedBatch[]): string =>
        batches.map((batch) => batch.map((item) => `${item.sequenceId}×${item.numTokens}`).join(",")).join(" ");

    it("fill each batch in rising sequence order, where node-llama-cpp alone keeps the falling order they queued in", async () => {
        const own = await prefillInReverse(false);
        const ordered = await prefillInReverse(true);
        for (const batches of [own, ordered]) {
            const numTokens = batches.flat().reduce((sum, item) => sum + item.numTokens, 0);
            expect(numTokens, describeBatches(batches)).toBe(NUM_SEQUENCES * PROMPT_TOKENS);
            expect(batches.length, describeBatches(batches)).toBeGreaterThan(1); // the prompts fill more than one batch
        }
        // node-llama-cpp's own order (3.21): 3, 2, 1, 0 in every batch, which llama.cpp computes as a graph per sequence
        expect(
            own.every((batch) => batch.map((item) => item.sequenceId).join() === "3,2,1,0"),
            describeBatches(own)
        ).toBe(true);
        expect(
            ordered.every((batch) => batch.map((item) => item.sequenceId).join() === "0,1,2,3"),
            describeBatches(ordered)
        ).toBe(true);
    });
});
