import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlamaModel } from "node-llama-cpp";
import type { KvEngine } from "../../../engine/KvEngine.js";
import { DraftModelError } from "../../../engine/runtime/DraftModelError.js";
import { DraftModelPredictor } from "../../../engine/runtime/DraftModelPredictor.js";
import { FileStateExchange } from "../../../engine/runtime/FileStateExchange.js";
import { LlamaRoleContext } from "../../../engine/runtime/LlamaRoleContext.js";
import { LlamaRuntime } from "../../../engine/runtime/LlamaRuntime.js";
import type { LlamaSequenceSlot } from "../../../engine/runtime/LlamaSequenceSlot.js";
import { PrivateStateDirectory } from "../../../engine/runtime/PrivateStateDirectory.js";
import { alice, expectEngineClean, promptOf, startTinyEngine } from "../../support/engineFixtures.js";
import { ensureFamilyModel, generatedModelPath } from "../../support/generatedModels.js";
import { greedyTokens } from "../../support/greedyTokens.js";

// Speculative decoding with a draft model (DraftModelPredictor) changes how fast tokens come, never
// which; a draft that is the model itself has every draft accepted, several a step (node-llama-cpp
// refuted every draft after the first until Kvault's fix); and a sequence's draft holds nothing
// of a workspace once the sequence is released.

const NUM_TOKENS = 48;
const DRAFT = { maxTokens: 4, minConfidence: 0 } as const;

describe("speculative decoding with a draft model", () => {
    let runtime: LlamaRuntime;
    let model: LlamaModel;
    let stateDirectory: PrivateStateDirectory;
    beforeAll(async () => {
        runtime = await LlamaRuntime.start({ gpu: false, maxThreads: 2 });
        model = await runtime.loadModel(generatedModelPath("tiny"));
        stateDirectory = PrivateStateDirectory.create();
    });
    afterAll(async () => {
        stateDirectory?.dispose();
        await model?.dispose();
        await runtime?.dispose();
    });

    it("gives the split engine's greedy tokens through the handoff, with several drafts accepted a step and none refuted", async () => {
        const engines: KvEngine[] = [];
        try {
            const plain = await startTinyEngine(runtime);
            engines.push(plain);
            const drafting = await startTinyEngine(runtime, {
                speculation: "draft-model",
                draftModelPath: generatedModelPath("tiny"),
                draftMaxTokens: DRAFT.maxTokens,
                draftMinConfidence: DRAFT.minConfidence
            });
            engines.push(drafting);
            const prompt = promptOf(plain, 100);
            const expected = await plain.generate({ workspace: alice, promptTokens: prompt, maxTokens: NUM_TOKENS });
            const drafted = await drafting.generate({ workspace: alice, promptTokens: prompt, maxTokens: NUM_TOKENS });
            expect(expected.numHandedOffTokens).toBeGreaterThan(0);
            expect(expected.tokens.length).toBeGreaterThanOrEqual(16);
            expect(drafted.tokens).toEqual(expected.tokens);
            expect(expected.drafts).toEqual({ validated: 0, refuted: 0 });
            // the model drafting for itself is always right; more accepted than steps shows several a step
            expect(drafted.drafts.refuted).toBe(0);
            expect(drafted.drafts.validated).toBeGreaterThan(expected.tokens.length / 2);
            for (const engine of engines) {
                await expectEngineClean(engine);
            }
        } finally {
            for (const engine of engines) {
                await engine.dispose();
            }
        }
    });

    it("empties a sequence's draft when the sequence is released, and the next workspace's draft holds only its own tokens", async () => {
        const context = await LlamaRoleContext.create(
            model,
            { role: "unified", contextSize: 256, numSequences: 1, flashAttention: true, speculation: { draftModel: model, ...DRAFT } },
            new FileStateExchange(stateDirectory)
        );
        try {
            const slot = context.acquireSequence() as LlamaSequenceSlot;
            const draft = slot.sequence.tokenPredictor;
            expect(draft).toBeInstanceOf(DraftModelPredictor);
            const { draftSequence } = draft as DraftModelPredictor;
            const promptOfA = model.tokenize("Workspace A keeps its ledger here: account 4471, balance 918.");
            await greedyTokens(slot, promptOfA, 16);
            expect(draftSequence.contextTokens.slice(0, promptOfA.length)).toEqual(promptOfA);

            await context.releaseSequence(slot);
            expect(draftSequence.nextTokenIndex).toBe(0);

            const again = context.acquireSequence() as LlamaSequenceSlot;
            expect(again).toBe(slot);
            const promptOfB = model.tokenize("Workspace B asks about the weather in a town far away.");
            const answerOfB = await greedyTokens(again, promptOfB, 16);
            // from its first cell, B's prompt and answer; beyond the answer only the draft's own last drafts, which continued them
            const held = draftSequence.contextTokens;
            const ownTokens = [...promptOfB, ...answerOfB];
            expect(held.length).toBeGreaterThan(promptOfB.length);
            expect(held.slice(0, ownTokens.length)).toEqual(ownTokens.slice(0, held.length));
        } finally {
            await context.dispose();
        }
    });

    it("refuses a draft model whose tokenizer is not the model's, saying so", async () => {
        const other = await runtime.loadModel(ensureFamilyModel("llama3-tiny", "q8_0"));
        try {
            const made = LlamaRoleContext.create(
                model,
                { role: "unified", contextSize: 256, numSequences: 1, flashAttention: true, speculation: { draftModel: other, ...DRAFT } },
                new FileStateExchange(stateDirectory)
            );
            await expect(made).rejects.toBeInstanceOf(DraftModelError);
            await expect(made).rejects.toThrow(/must have the model's tokenizer/);
        } finally {
            await other.dispose();
        }
    });
});
