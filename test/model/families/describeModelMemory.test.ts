import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { GgufInsights, readGgufFileInfo } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeGgufFile } from "../../../synthetic/gguf/writeGgufFile.js";
import { planFamilyModel } from "../../../synthetic/model/familyModel.js";
import { familyPresets } from "../../../synthetic/model/familyPresets.js";
import { describeInsightsMemory } from "../../../engine/runtime/describeModelMemory.js";
import { ensureFamilyModel } from "../../support/generatedModels.js";

async function insightsOf(modelPath: string): Promise<GgufInsights> {
    return GgufInsights.from(await readGgufFileInfo(modelPath, { logWarnings: false }));
}

describe("describeInsightsMemory on the families' files", () => {
    let directory: string;
    beforeAll(() => {
        directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-model-memory-"));
    });
    afterAll(() => {
        fs.rmSync(directory, { recursive: true, force: true });
    });

    it("calls Gemma 3's sliding window what it is: not a plain KV cache, with the window and why", async () => {
        const insights = await insightsOf(ensureFamilyModel("gemma3-tiny", "q8_0"));
        expect(insights.swaSize).toBe(32);
        expect(describeInsightsMemory(insights)).toEqual({
            plainKvCache: false,
            reason: expect.stringMatching(
                /^the model uses sliding-window attention \(32 tokens\), whose cache has another layout: llama\.cpp keeps/
            )
        });
    });

    it("pages Phi-3, whose file names a 2047-token window that llama.cpp's phi3 graph does not use", async () => {
        const insights = await insightsOf(ensureFamilyModel("phi3-tiny", "q8_0"));
        expect(insights.swaSize).toBe(2047); // node-llama-cpp reports the key as written
        expect(describeInsightsMemory(insights)).toEqual({ plainKvCache: true });
    });

    it("pages a llama file with a sliding_window key (Mistral 7B v0.1's 4096), which llama.cpp's llama graph never reads", async () => {
        const plan = planFamilyModel(familyPresets["mistral-tiny"], "q4_0");
        const modelPath = path.join(directory, "mistral-with-window.gguf");
        writeGgufFile(modelPath, {
            ...plan,
            metadata: [...plan.metadata, { key: "llama.attention.sliding_window", value: { type: "u32", value: 4096 } }]
        });
        const insights = await insightsOf(modelPath);
        expect(insights.swaSize).toBe(4096);
        expect(describeInsightsMemory(insights)).toEqual({ plainKvCache: true });
    });

    it.each(["llama3-tiny", "qwen2-tiny", "qwen3-tiny", "mistral-tiny"] as const)("pages %s", async (preset) => {
        expect(describeInsightsMemory(await insightsOf(ensureFamilyModel(preset, "q8_0")))).toEqual({ plainKvCache: true });
    });
});
