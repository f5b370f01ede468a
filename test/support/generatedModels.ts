import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GgmlTensorType, type GgufTensorSpec } from "../../engine/gguf/ggufTypes.js";
import { roundTripValues } from "./roundTripValues.js";
import { writeGgufFile } from "../../synthetic/gguf/writeGgufFile.js";
import { FAMILY_MODEL_VERSION, planFamilyModel } from "../../synthetic/model/familyModel.js";
import { familyPresets, type FamilyPresetName } from "../../synthetic/model/familyPresets.js";
import { llamaCppBundle } from "../../synthetic/model/llamaCppAssets.js";
import { makeSyntheticModel } from "../../synthetic/model/makeSyntheticModel.js";
import type { ModelQuant } from "../../synthetic/model/modelQuantization.js";
import type { ModelPresetName } from "../../synthetic/model/modelPresets.js";
import { SYNTHETIC_MODEL_VERSION } from "../../synthetic/model/syntheticModel.js";

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const modelCacheDirectory = path.join(repositoryRoot, ".cache", "models");

/** Where tests find a preset's generated model; the version in the name retires stale files. */
export function generatedModelPath(preset: ModelPresetName): string {
    return path.join(modelCacheDirectory, `${preset}-v${SYNTHETIC_MODEL_VERSION}.gguf`);
}

/** Generates the preset's model unless an up-to-date one is already there. */
export function ensureGeneratedModel(preset: ModelPresetName): string {
    const modelPath = generatedModelPath(preset);
    if (!fs.existsSync(modelPath)) {
        fs.mkdirSync(modelCacheDirectory, { recursive: true });
        makeSyntheticModel(preset, modelPath);
    }
    return modelPath;
}

/** The preset's model with its matrices in `quant` (the same seeded weights, quantized), generated unless there. */
export function ensureQuantizedModel(preset: ModelPresetName, quant: ModelQuant): string {
    if (quant === "f16") {
        return ensureGeneratedModel(preset);
    }
    const modelPath = generatedModelPath(preset).replace(/\.gguf$/, `-${quant}.gguf`);
    if (!fs.existsSync(modelPath)) {
        fs.mkdirSync(modelCacheDirectory, { recursive: true });
        makeSyntheticModel(preset, modelPath, { quant });
    }
    return modelPath;
}

/** Where tests find a family preset's model in `quant`: the generator version and node-llama-cpp's llama.cpp commit (whose tokenizers it holds) retire stale files. */
export function familyModelPath(preset: FamilyPresetName, quant: ModelQuant, variant = ""): string {
    const commit = llamaCppBundle().commit.slice(0, 10);
    return path.join(modelCacheDirectory, `${preset}-${quant}${variant}-v${FAMILY_MODEL_VERSION}-${commit}.gguf`);
}

/** Generates a family preset's model in `quant` unless an up-to-date one is already there. */
export function ensureFamilyModel(preset: FamilyPresetName, quant: ModelQuant): string {
    const modelPath = familyModelPath(preset, quant);
    if (!fs.existsSync(modelPath)) {
        fs.mkdirSync(modelCacheDirectory, { recursive: true });
        makeSyntheticModel(preset, modelPath, { quant });
    }
    return modelPath;
}

/**
 * The quantized model's twin: the same file with every quantized matrix stored as F16 of the values
 * its blocks stand for, as this repository's writer reads them back. llama.cpp running the quantized
 * file dequantizes with ggml's own code; if the two readings of the blocks agree, both files compute
 * the same function (up to llama.cpp quantizing activations for quantized matmuls, and F16 rounding).
 */
export function ensureDequantizedTwin(preset: FamilyPresetName, quant: ModelQuant): string {
    const modelPath = familyModelPath(preset, quant, "-twin");
    if (!fs.existsSync(modelPath)) {
        fs.mkdirSync(modelCacheDirectory, { recursive: true });
        const plan = planFamilyModel(familyPresets[preset], quant);
        const tensors = plan.tensors.map((tensor): GgufTensorSpec => {
            if (tensor.type === GgmlTensorType.F32 || tensor.type === GgmlTensorType.F16) {
                return tensor;
            }
            return {
                ...tensor,
                type: GgmlTensorType.F16,
                fill(out, start) {
                    tensor.fill(out, start);
                    roundTripValues(tensor.type, out);
                }
            };
        });
        writeGgufFile(modelPath, { metadata: plan.metadata, tensors });
    }
    return modelPath;
}
