import { describe, expect, it } from "vitest";
import { familyPresetNames, familyPresets, modelFamilies } from "../../../../synthetic/model/familyPresets.js";
import { familyVocabularies } from "../../../../synthetic/model/familyVocabularies.js";
import { allPresetNames, isPresetName } from "../../../../synthetic/model/presetPlans.js";

describe("the family presets", () => {
    it("give every family a tiny preset for tests and one of 0.5–1.3B parameters for benchmarks", () => {
        for (const family of Object.keys(modelFamilies)) {
            const presets = familyPresetNames.filter((name) => familyPresets[name].family === family);
            expect(presets, family).toHaveLength(2);
            expect(
                presets.some((name) => name.endsWith("-tiny")),
                family
            ).toBe(true);
        }
    });

    it.each(familyPresetNames)("%s has a consistent attention geometry", (name) => {
        const preset = familyPresets[name];
        expect(preset.numHeads % preset.numKvHeads, "query heads per KV head").toBe(0);
        expect(preset.headDimension % 2, "RoPE rotates pairs").toBe(0);
        const arch = modelFamilies[preset.family].architecture;
        if (arch === "qwen2" || arch === "phi3" || arch === "llama") {
            // these graphs take the head width as n_embd / n_head
            expect(preset.numHeads * preset.headDimension).toBe(preset.embeddingLength);
        }
        // every weight matrix's rows are whole Q8_0/Q4_0 blocks of 32, so both quantise without fallback
        for (const rowLength of [preset.embeddingLength, preset.numHeads * preset.headDimension, preset.feedForwardLength]) {
            expect(rowLength % 32).toBe(0);
        }
        if (preset.slidingWindow !== undefined) {
            expect(preset.slidingWindow).toBeLessThan(preset.contextLength);
        }
    });

    it("has one preset, mistral-tiny, whose every matrix is whole Q4_K super-blocks", () => {
        const preset = familyPresets["mistral-tiny"];
        for (const rowLength of [preset.embeddingLength, preset.numHeads * preset.headDimension, preset.feedForwardLength]) {
            expect(rowLength % 256).toBe(0);
        }
    });

    it("takes Gemma 3's sliding window to a tiny size the tests cross, with five windowed layers to one global", () => {
        const preset = familyPresets["gemma3-tiny"];
        expect(preset.numLayers).toBe(6);
        expect(preset.slidingWindow).toBe(32);
    });

    it("names every vocabulary file in the llama.cpp repository's models folder, renaming only placeholders", () => {
        for (const [name, vocabulary] of Object.entries(familyVocabularies)) {
            expect(vocabulary.file, name).toMatch(/^models\/ggml-vocab-[a-z0-9-]+\.gguf$/);
            for (const renamed of vocabulary.renamed) {
                expect(renamed.id, name).toBeLessThan(vocabulary.numTokens);
                expect(renamed.was, name).toMatch(/^(\[PAD\d+\]|<\|reserved_special_token_\d+\|>|<\|turn>|<turn\|>)$/);
            }
            expect(vocabulary.specialIds.eos).toBeLessThan(vocabulary.numTokens);
        }
    });

    it("keeps one namespace for all presets", () => {
        expect(new Set(allPresetNames).size).toBe(allPresetNames.length);
        expect(isPresetName("tiny")).toBe(true);
        expect(isPresetName("qwen3-tiny")).toBe(true);
        expect(isPresetName("qwen4-tiny")).toBe(false);
    });
});
