import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfigInput } from "../../engine/EngineConfig.js";
import { KvEngine, type KvEngineHooks } from "../../engine/KvEngine.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { expectCorruptedHandoffRefused } from "../support/corruptedHandoff.js";
import { expectEngineClean, freshWorkspace, promptOf } from "../support/engineFixtures.js";
import { ensureFamilyModel } from "../support/generatedModels.js";

/**
 * Flash attention and four sequences, as users run it: on ggml's Vulkan backend a context whose first
 * graph was one token crashed at the first decode once a sequence held more than 256 tokens, so one
 * prompt here is past that.
 */
const vulkanEngineConfig: Omit<EngineConfigInput, "modelPath"> = {
    gpu: "vulkan",
    window: 512,
    prefillContextSize: 512,
    decodeContextSize: 512,
    numDecodeSequences: 4,
    pageTokens: 16,
    numPages: 96,
    inPlacePrefillTokens: 0,
    flashAttention: true
};

const MAX_TOKENS = 6;

describe("qwen3-tiny on Vulkan, every layer on the device", () => {
    let runtime: LlamaRuntime;
    let engine: KvEngine;
    let unified: KvEngine;
    const hooks: KvEngineHooks = {};

    beforeAll(async () => {
        const modelPath = ensureFamilyModel("qwen3-tiny", "q8_0");
        runtime = await LlamaRuntime.start({ gpu: "vulkan" });
        console.log(`backend ${runtime.backend}, device ${runtime.devices.map((device) => device.name).join(", ")}`);
        engine = await KvEngine.start({ modelPath, ...vulkanEngineConfig }, { runtime, hooks });
        unified = await KvEngine.start({ modelPath, ...vulkanEngineConfig, mode: "unified" }, { runtime });
    });
    afterAll(async () => {
        await unified?.dispose();
        await engine?.dispose();
        await runtime?.dispose();
    });

    it("runs on the Vulkan device with every layer offloaded", () => {
        expect(runtime.backend).toBe("vulkan");
        expect(runtime.devices.length).toBeGreaterThan(0);
        expect(engine.model.gpuLayers).toBe(engine.model.fileInsights.totalLayers);
    });

    it("hands prompts through pages and generates exactly what unified mode generates, past 256 tokens too", async () => {
        for (const numPromptTokens of [300, 33]) {
            const prompt = promptOf(engine, numPromptTokens);
            const served = await engine.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
            const reference = await unified.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
            expect(served.numHandedOffTokens).toBe(numPromptTokens - 1);
            expect(served.tokens, `${numPromptTokens}-token prompt`).toEqual(reference.tokens);
            await expectEngineClean(engine);
            await unified.forgetAllWorkspaces();
        }
    });

    it("refuses a handoff whose page was corrupted after sealing, and serves the next request", async () => {
        const prompt = promptOf(engine, 40, "flip: ");
        const reference = await unified.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
        await expectCorruptedHandoffRefused(engine, hooks, prompt, MAX_TOKENS);
        const next = await engine.generate({ workspace: freshWorkspace(), promptTokens: prompt, maxTokens: MAX_TOKENS });
        expect(next.tokens).toEqual(reference.tokens);
        await expectEngineClean(engine);
        await unified.forgetAllWorkspaces();
    });
});
