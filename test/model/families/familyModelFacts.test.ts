import { describe, expect, it } from "vitest";
import { familyPresets, modelFamilies, type FamilyPresetName } from "../../../synthetic/model/familyPresets.js";
import { inspectModelFile } from "../../../host/models/inspectModelFile.js";
import { ensureFamilyModel } from "../../support/generatedModels.js";

const tinyPresets: readonly FamilyPresetName[] = ["llama3-tiny", "qwen2-tiny", "qwen3-tiny", "phi3-tiny", "gemma3-tiny", "mistral-tiny"];

// What the model panel and /v1/models report, read back from each family's tiny file, against what its preset wrote.
describe.each(tinyPresets)("the facts of the %s file", (presetName) => {
    const preset = familyPresets[presetName];

    it("are the preset's: architecture, quantisation, layers, heads, head sizes, windows, KV bytes per token in every type", async () => {
        const facts = await inspectModelFile(ensureFamilyModel(presetName, "q8_0"), { contextSize: 512, sequences: 1 });
        const { numLayers, numKvHeads, headDimension } = preset;
        expect(facts).toMatchObject({
            architecture: modelFamilies[preset.family].architecture,
            fileType: "MOSTLY_Q8_0",
            numLayers,
            heads: { numHeads: preset.numHeads, numKvHeads, kHeadSize: headDimension, vHeadSize: headDimension },
            trainContextSize: preset.contextLength,
            slidingWindow: preset.slidingWindow
        });
        // per token: every layer's K and V, each numKvHeads heads of headDimension values
        const valuesPerToken = numLayers * 2 * numKvHeads * headDimension;
        expect(facts.kvBytesPerToken).toBe(valuesPerToken * 2);
        expect(facts.kvBytesPerTokenByType).toEqual({
            f16: valuesPerToken * 2,
            q8_0: (valuesPerToken / 32) * 34,
            q4_0: (valuesPerToken / 32) * 18
        });
        expect(facts.parameterCount).toBeGreaterThan(0);
        expect(facts.memory.plainKvCache).toBe(presetName !== "gemma3-tiny");
    });
});
