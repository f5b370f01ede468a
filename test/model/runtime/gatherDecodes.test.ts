import { describe, expect, it } from "vitest";
import { LlamaSequenceSlot } from "../../../engine/runtime/LlamaSequenceSlot.js";
import { gatherDecodes } from "../../../engine/runtime/gatherDecodes.js";
import { orderDecodesBySequence } from "../../../engine/runtime/orderDecodesBySequence.js";
import { refuseContextShift } from "../../../engine/runtime/refuseContextShift.js";
import { useTinyModel } from "../../support/useTinyModel.js";
import { recordBatches, type RecordedBatch } from "../../support/recordBatches.js";

// node-llama-cpp composes a context's next batch as soon as the last sample of the previous one is
// in, before the sequence sampled last has queued its next token, so one stream misses every batch.
// gatherDecodes keeps the generating sequences of a context in one batch a step, and
// orderDecodesBySequence fills it in sequence order, as every Kvault context does.

const NUM_SEQUENCES = 4;
const NUM_TOKENS = 24;

describe("the generating sequences of one context", () => {
    const tiny = useTinyModel(2);

    /**
     * Four streams at once in a fresh context, each `NUM_TOKENS` greedy tokens after its own prompt,
     * started in `order`, gathered and ordered as a Kvault decode context or left to node-llama-cpp:
     * every batch the context decoded, and the tokens.
     */
    async function streamTogether(
        gathered: boolean,
        order: "forward" | "reverse" = "forward"
    ): Promise<{ batches: RecordedBatch[]; tokens: number[][] }> {
        const context = await tiny.model.createContext({ contextSize: 256, sequences: NUM_SEQUENCES, flashAttention: true, threads: 2 });
        tiny.track(context);
        const batches = recordBatches(context);
        const sequences = Array.from({ length: NUM_SEQUENCES }, () => context.getSequence({ contextShift: refuseContextShift }));
        const gathering = gathered ? gatherDecodes(context, sequences) : undefined;
        expect(gathering?.active ?? true, "node-llama-cpp has the members gatherDecodes needs").toBe(true);
        expect(!gathered || orderDecodesBySequence(context), "node-llama-cpp has the queue orderDecodesBySequence orders").toBe(true);
        const indexes = sequences.map((_, index) => index);
        const started = (order === "forward" ? indexes : indexes.reverse()).map(async (index) => {
            const slot = new LlamaSequenceSlot(sequences[index]!, index, gathering);
            const generated: number[] = [];
            const prompt = tiny.model.tokenize(`Stream ${index} of four, each its own prompt.`);
            for await (const token of slot.generate(prompt, { temperature: 0 })) {
                generated.push(token);
                if (generated.length === NUM_TOKENS) {
                    break;
                }
            }
            return [index, generated] as const;
        });
        const tokens: number[][] = [];
        for (const [index, generated] of await Promise.all(started)) {
            tokens[index] = generated;
        }
        return { batches, tokens };
    }

    /** The batches of one token per stream (the prompts go in one batch first). */
    const decodeSteps = (batches: RecordedBatch[]): RecordedBatch[] =>
        batches.filter((batch) => batch.every((item) => item.numTokens === 1));
    const describeBatch = (batch: RecordedBatch): string => batch.map((item) => item.sequenceId).join(",");
    const describe = (batches: RecordedBatch[]): string => batches.map(describeBatch).join(" ");

    it("decode in one batch a step, where node-llama-cpp alone leaves one out of each", async () => {
        const own = await streamTogether(false);
        const gathered = await streamTogether(true);
        for (const run of [own, gathered]) {
            expect(run.tokens.map((tokens) => tokens.length)).toEqual(Array(NUM_SEQUENCES).fill(NUM_TOKENS));
        }
        expect(
            decodeSteps(gathered.batches).map((batch) => batch.length),
            `gathered: ${describe(gathered.batches)}`
        ).toEqual(Array(NUM_TOKENS - 1).fill(NUM_SEQUENCES));
        // node-llama-cpp's own, as measured (3.21): batches of 3, one stream a step behind. Should it
        // ever batch all four by itself, this fails, and the gathering can go.
        const ownSteps = decodeSteps(own.batches);
        expect(ownSteps.length, `own: ${describe(own.batches)}`).toBeGreaterThan(NUM_TOKENS);
        expect(ownSteps.filter((batch) => batch.length === NUM_SEQUENCES).length).toBeLessThan(NUM_TOKENS / 2);
    });

    it("fill each batch in sequence order, whatever order the streams started in", async () => {
        const own = await streamTogether(false, "reverse");
        const gathered = await streamTogether(true, "reverse");
        const inOrder = (batch: RecordedBatch): boolean => batch.every((item, i) => i === 0 || item.sequenceId > batch[i - 1]!.sequenceId);
        // node-llama-cpp's own keeps the order in which the streams queued: 3, 2, 1, 0, which llama.cpp splits into a graph each
        expect(
            own.batches[0]!.map((item) => item.sequenceId),
            `own: ${describe(own.batches)}`
        ).toEqual([3, 2, 1, 0]);
        expect(gathered.batches.every(inOrder), `gathered: ${describe(gathered.batches)}`).toBe(true);
        expect(decodeSteps(gathered.batches).map(describeBatch)).toEqual(Array(NUM_TOKENS - 1).fill("0,1,2,3"));
        // (No token-for-token comparison with node-llama-cpp's own: one graph of four tokens sums in
        // other blocks than four graphs of one, and the tiny model's random weights tell them apart.)
    });

    it("counts a sequence while it generates, and no longer once its generation ends, by a stop or by an error", async () => {
        const context = await tiny.model.createContext({ contextSize: 256, sequences: 2, flashAttention: true, threads: 2 });
        tiny.track(context);
        const sequences = [0, 1].map(() => context.getSequence({ contextShift: refuseContextShift }));
        const gathering = gatherDecodes(context, sequences);
        const slot = new LlamaSequenceSlot(sequences[0]!, 0, gathering);
        const during: number[] = [];
        for await (const token of slot.generate(tiny.model.tokenize("One stream, stopped early."), { temperature: 0 })) {
            void token;
            during.push(gathering.numGenerating);
            if (during.length === 3) {
                break;
            }
        }
        expect(during).toEqual([1, 1, 1]);
        expect(gathering.numGenerating).toBe(0);

        // a prompt longer than the sequence holds fails inside node-llama-cpp's evaluation
        const failing = slot.generate(tiny.model.tokenize("words ".repeat(400)), { temperature: 0 });
        await expect(failing.next()).rejects.toThrow();
        expect(gathering.numGenerating).toBe(0);

        const end = gathering.generating();
        end();
        end();
        expect(gathering.numGenerating, "ending twice counts once").toBe(0);
    });
});
