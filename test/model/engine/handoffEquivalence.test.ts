import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KvEngine } from "../../../engine/KvEngine.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import { alice, bob, expectEngineClean, freshWorkspace, promptOf, startTinyEngine } from "../../support/engineFixtures.js";

const MAX_TOKENS = 8;

// Both binaries: the local build the model tests' global setup makes (Kvault's patched addon, states
// through memory) and node-llama-cpp's prebuilt (states through the private state directory).
describe.each([
    { name: "V in rows (flash attention), local build", flashAttention: true, preferLocalBuild: true },
    { name: "V transposed, local build", flashAttention: false, preferLocalBuild: true },
    { name: "V in rows (flash attention), prebuilt", flashAttention: true, preferLocalBuild: false },
    { name: "V transposed, prebuilt", flashAttention: false, preferLocalBuild: false }
])("split mode hands prompts through pages and matches unified mode token for token: $name", ({ flashAttention, preferLocalBuild }) => {
    let runtime: LlamaRuntime;
    let split: KvEngine;
    let unified: KvEngine;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false, preferLocalBuild });
        split = await startTinyEngine(runtime, { flashAttention });
        unified = await startTinyEngine(runtime, { flashAttention, mode: "unified" });
    });
    afterAll(async () => {
        await split.dispose();
        await unified.dispose();
        await split.dispose(); // disposal is idempotent
        await runtime.dispose();
    });

    it("measures its capacities from the contexts and pool it created", () => {
        expect(split.window.capacities).toEqual({
            window: 256,
            prefill: split.prefill!.sequenceCapacity,
            decode: split.decode.sequenceCapacity,
            pool: 48 * 16
        });
        expect(split.prefill!.sequenceCapacity).toBeGreaterThanOrEqual(256);
        expect(split.window).toMatchObject({ limit: 256, boundBy: "window", clamped: false });
        expect(split.layout.vTransposed).toBe(!flashAttention);
        expect(split.mode).toEqual({ requested: "split", effective: "split" });
        expect(unified.mode).toEqual({ requested: "unified", effective: "unified" });
        expect(runtime.binary.kind).toBe(preferLocalBuild ? "localBuild" : "prebuilt");
        expect(split.stateExchange.kind).toBe(preferLocalBuild ? "memory" : "file");
    });

    // Handed-off positions are prompt − 1 (decode evaluates the last prompt token): these straddle
    // page boundaries at 16 and 32 by one either way, and the last fills the window exactly.
    it.each([2, 16, 17, 18, 32, 33, 34, 100, 256 - MAX_TOKENS])("a %i-token prompt", async (numPromptTokens) => {
        const prompt = promptOf(split, numPromptTokens);
        const savedIntoPagesBefore = split.counters.statesSavedIntoPages;
        const handedOff = await split.generate({ workspace: alice, promptTokens: prompt, maxTokens: MAX_TOKENS });
        // the patched build's llama.cpp saves the state straight into the pages (V in rows); files need an export first
        expect(split.counters.statesSavedIntoPages - savedIntoPagesBefore).toBe(preferLocalBuild && flashAttention ? 1 : 0);
        const reference = await unified.generate({ workspace: bob, promptTokens: prompt, maxTokens: MAX_TOKENS });

        expect(handedOff.numHandedOffTokens).toBe(numPromptTokens - 1);
        expect(reference.numHandedOffTokens).toBe(0);
        expect(handedOff.tokens.length).toBeGreaterThan(0);
        expect(handedOff.tokens).toEqual(reference.tokens);
        expect(handedOff.finishReason).toBe(reference.finishReason);
        await expectEngineClean(split);
        await expectEngineClean(unified);
    });

    it("prefills two prompts arriving together at once, in the same batches, and each matches unified mode token for token", async () => {
        const prefill = split.prefill!;
        expect(prefill.numSequences).toBe(2); // one per decode sequence, by default
        const busyAtEvaluation: number[] = [];
        const evaluate = prefill.evaluate.bind(prefill);
        prefill.evaluate = (slot, tokens) => {
            busyAtEvaluation.push(prefill.numBusySequences);
            return evaluate(slot, tokens);
        };
        try {
            const prompts = [promptOf(split, 90, "First. "), promptOf(split, 140, "Second. ")];
            const together = await Promise.all(
                prompts.map((prompt) => split.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS }))
            );
            expect(busyAtEvaluation).toEqual([2, 2]); // under one prefill sequence the second would wait: [1, 1]
            for (const [index, prompt] of prompts.entries()) {
                const reference = await unified.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
                expect(together[index]!.numHandedOffTokens).toBe(prompt.length - 1);
                expect(together[index]!.tokens).toEqual(reference.tokens);
            }
        } finally {
            delete (prefill as { evaluate?: unknown }).evaluate; // the prototype's again
        }
        await expectEngineClean(split);
        await expectEngineClean(unified);
    });

    it("serves a prompt of exactly the capacity, and refuses one token more before reserving a page", async () => {
        const limit = split.window.limit;
        const exact = await split.generate({ workspace: alice, promptTokens: promptOf(split, limit - 1), maxTokens: 1 });
        expect(exact.tokens).toHaveLength(1);
        const reservationsBefore = split.pool.counters.numReservations;
        await expect(split.generate({ workspace: alice, promptTokens: promptOf(split, limit), maxTokens: 1 })).rejects.toMatchObject({
            code: "context_length_exceeded",
            numPromptTokens: limit,
            maxTokens: 1,
            limit
        });
        expect(split.pool.counters.numReservations).toBe(reservationsBefore);
        await expectEngineClean(split);
    });
});
