import { InvariantError } from "../../engine/core/invariant.js";
import { familyPresetNames, familyPresets, isFamilyPresetName, modelFamilies } from "./familyPresets.js";
import { familyVocabularies } from "./familyVocabularies.js";
import { planFamilyModel } from "./familyModel.js";
import type { ModelQuant } from "./modelQuantization.js";
import { isModelPresetName, modelPresetNames, modelPresets } from "./modelPresets.js";
import { planSyntheticModel, type SyntheticModelPlan } from "./syntheticModel.js";

/** Every preset `make-model` knows: the llama presets with Kvault's own vocabulary, then the families. */
export const allPresetNames: readonly string[] = [...modelPresetNames, ...familyPresetNames];

export function isPresetName(name: string): boolean {
    return isModelPresetName(name) || isFamilyPresetName(name);
}

/** The plan of a known preset (see isPresetName) with its matrices as `quant`. */
export function planPresetModel(name: string, quant: ModelQuant): SyntheticModelPlan {
    if (isModelPresetName(name)) {
        return planSyntheticModel(modelPresets[name], quant);
    }
    if (isFamilyPresetName(name)) {
        return planFamilyModel(familyPresets[name], quant);
    }
    throw new InvariantError(`no preset named ${name}: check isPresetName first`);
}

export interface PresetSummary {
    readonly name: string;
    readonly description: string;
    readonly architecture: string;
    /** What the tokenizer is, in words. */
    readonly tokenizer: string;
}

export function describePreset(name: string): PresetSummary {
    if (isFamilyPresetName(name)) {
        const preset = familyPresets[name];
        const family = modelFamilies[preset.family];
        return {
            name,
            description: preset.description,
            architecture: family.architecture,
            tokenizer: familyVocabularies[family.vocabulary].description
        };
    }
    if (isModelPresetName(name)) {
        return {
            name,
            description: modelPresets[name].description,
            architecture: "llama",
            tokenizer: "Kvault's own SentencePiece-style vocabulary"
        };
    }
    throw new InvariantError(`no preset named ${name}: check isPresetName first`);
}
