import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfigInput } from "../../engine/EngineConfig.js";
import { KvEngine } from "../../engine/KvEngine.js";
import type { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { expectEngineClean } from "../support/engineFixtures.js";
import { ensureFamilyModel } from "../support/generatedModels.js";
import { expectEveryLayerOnDevice, startTestRuntime } from "../support/testRuntime.js";
import { expectSplitMatchesUnified, type FamilyMemory } from "../model/families/familyEquivalence.js";

/**
 * The smallest engine that still crosses pages and Gemma 3's 32-token sliding window: a 33-token
 * prompt hands off 32 positions, two pages of 16. Flash attention off, as the family suite runs: the
 * transposed V layout on the device (vulkanFamilies.test.ts runs the other one). Swapping is tested on
 * the tiny model (vulkanIsolation.test.ts): these vocabularies of 128k and 262k tokens make every
 * step a large output layer on a software device.
 */
const familyEngineConfig: Omit<EngineConfigInput, "modelPath"> = {
    window: 128,
    prefillContextSize: 128,
    decodeContextSize: 128,
    numDecodeSequences: 1,
    pageTokens: 16,
    numPages: 24,
    inPlacePrefillTokens: 0,
    flashAttention: false
};

const NUM_PROMPT_TOKENS = 33;
const MAX_TOKENS = 4;

let runtime: LlamaRuntime;
beforeAll(async () => {
    runtime = await startTestRuntime();
});
afterAll(async () => {
    await runtime?.dispose();
});

describe.each<{ preset: "llama3-tiny" | "gemma3-tiny"; memory: FamilyMemory }>([
    { preset: "llama3-tiny", memory: { paged: true } },
    // llama.cpp keeps Gemma 3's windowed layers in a second cache that pages cannot hold: it runs unified, saying why
    { preset: "gemma3-tiny", memory: { paged: false, reason: /sliding-window attention \(32 tokens\)/ } }
])("$preset on Vulkan, every layer on the device", ({ preset, memory }) => {
    let engine: KvEngine;
    let unified: KvEngine;
    beforeAll(async () => {
        const modelPath = ensureFamilyModel(preset, "q8_0");
        engine = await KvEngine.start({ modelPath, ...familyEngineConfig }, { runtime });
        unified = await KvEngine.start({ modelPath, ...familyEngineConfig, mode: "unified" }, { runtime });
        expectEveryLayerOnDevice(engine);
    });
    afterAll(async () => {
        await unified?.dispose();
        await engine?.dispose();
    });

    it(`generates exactly what unified mode generates from a ${NUM_PROMPT_TOKENS}-token prompt`, async () => {
        expect(engine.mode).toEqual(
            memory.paged
                ? { requested: "split", effective: "split" }
                : { requested: "split", effective: "unified", reason: expect.stringMatching(memory.reason) }
        );
        await expectSplitMatchesUnified(engine, unified, memory, NUM_PROMPT_TOKENS, MAX_TOKENS);
        await expectEngineClean(engine);
        await unified.forgetAllWorkspaces();
    });
});
