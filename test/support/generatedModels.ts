import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeSyntheticModel } from "../../engine/model/makeSyntheticModel.js";
import type { ModelPresetName } from "../../engine/model/modelPresets.js";
import { SYNTHETIC_MODEL_VERSION } from "../../engine/model/syntheticModel.js";

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
