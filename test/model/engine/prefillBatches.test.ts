import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KvEngine } from "../../../engine/KvEngine.js";
import { LlamaRoleContext } from "../../../engine/runtime/LlamaRoleContext.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import type { SequenceSlot } from "../../../engine/runtime/SequenceSlot.js";
import { startTinyEngine } from "../../support/engineFixtures.js";
import { recordBatches, type RecordedBatch } from "../../support/recordBatches.js";

// The engine's prefill context gives each batch to one prompt (oneSequenceABatch): llama.cpp cuts a
// batch of several sequences into micro-batches of equal tokens a sequence, and its CPU flash
// attention is tiled only from 64 tokens of each; prompts that shared a batch got fewer and took
// up to four times as long. And a context gives out its lowest free sequence (takeLowestIndex).

const NUM_SEQUENCES = 4;
const PROMPT_TOKENS = 200;
const BATCH_SIZE = 128;

describe("the engine's prefill context", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    let prefill: LlamaRoleContext;
    /** Each batch the prefill context decoded: the sequences added, in batch order, and the tokens each. */
    let batches: RecordedBatch[] = [];

    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false, maxThreads: 2 });
        engine = await startTinyEngine(runtime, { numDecodeSequences: NUM_SEQUENCES, batchSize: BATCH_SIZE });
        expect(engine.prefill).toBeInstanceOf(LlamaRoleContext);
        prefill = engine.prefill as LlamaRoleContext;
        batches = recordBatches(prefill.context);
    });
    afterAll(async () => {
        await engine?.dispose();
        await runtime?.dispose();
    });

    /** A prompt of exactly `PROMPT_TOKENS` tokens, its own for each `label`. */
    function promptFor(label: number): number[] {
        const tokens = engine.model.tokenize(`Prompt ${label}: ${"the pages stay apart and the cache is checked, ".repeat(40)}`);
        expect(tokens.length).toBeGreaterThanOrEqual(PROMPT_TOKENS);
        return tokens.slice(0, PROMPT_TOKENS);
    }

    async function exportBytes(slot: SequenceSlot): Promise<Buffer> {
        const exported = await prefill.exportState(slot, "prefill-batches-test");
        try {
            return Buffer.from(exported.bytes);
        } finally {
            exported.release();
        }
    }

    it("gives each batch to one prompt, in sequence order, and computes each as it would alone", async () => {
        const slots = Array.from({ length: NUM_SEQUENCES }, () => prefill.acquireSequence()!);
        expect(slots.map((slot) => slot.index)).toEqual([0, 1, 2, 3]);
        const prompts = slots.map((slot) => promptFor(slot.index));
        batches.length = 0;
        // queued from the last sequence to the first, all at once
        await Promise.all([...slots].reverse().map((slot) => prefill.evaluate(slot, prompts[slot.index]!)));
        const described = batches.map((batch) => batch.map((item) => `${item.sequenceId}×${item.numTokens}`).join(",")).join(" ");
        expect(
            batches.every((batch) => batch.length === 1),
            `one sequence a batch: ${described}`
        ).toBe(true);
        expect(batches.flat().reduce((sum, item) => sum + item.numTokens, 0)).toBe(NUM_SEQUENCES * PROMPT_TOKENS);
        expect(batches.every((batch) => batch[0]!.numTokens <= BATCH_SIZE)).toBe(true);
        // the first queued in sequence order goes first and keeps the batches until it is done: 0, 0, 1, 1, …
        const order = batches.map((batch) => batch[0]!.sequenceId);
        expect(order, described).toEqual([...order].sort((a, b) => a - b));
        expect(new Set(order)).toEqual(new Set([0, 1, 2, 3]));

        const together = await Promise.all(slots.map((slot) => exportBytes(slot)));
        for (const slot of slots) {
            await prefill.releaseSequence(slot);
        }
        // each prompt evaluated alone, in the same sequence (another stream sums in other blocks), leaves the very same state
        for (const [index, prompt] of prompts.entries()) {
            const taken = Array.from({ length: index + 1 }, () => prefill.acquireSequence()!);
            const alone = taken.at(-1)!;
            expect(alone.index, "the lowest free sequences are given out first").toBe(index);
            await prefill.evaluate(alone, prompt);
            const aloneBytes = await exportBytes(alone);
            for (const slot of taken) {
                await prefill.releaseSequence(slot);
            }
            expect(aloneBytes.equals(together[index]!), `prompt ${index}'s state`).toBe(true);
        }
    });

    it("gives out its lowest free sequence, whatever order they were released in", async () => {
        expect(prefill.numFreeSequences).toBe(NUM_SEQUENCES);
        const slots = Array.from({ length: NUM_SEQUENCES }, () => prefill.acquireSequence()!);
        for (const index of [3, 1, 2, 0]) {
            await prefill.releaseSequence(slots[index]!);
        }
        const again = [prefill.acquireSequence()!, prefill.acquireSequence()!];
        expect(again.map((slot) => slot.index)).toEqual([0, 1]);
        await prefill.releaseSequence(again[1]!);
        await prefill.releaseSequence(again[0]!);
        expect(prefill.numFreeSequences).toBe(NUM_SEQUENCES);
    });
});
