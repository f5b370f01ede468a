import { writeGgufFile, type WrittenGguf } from "../gguf/writeGgufFile.js";
import { KvaultError } from "../core/KvaultError.js";
import { isModelPresetName, modelPresetNames, modelPresets } from "./modelPresets.js";
import { planSyntheticModel } from "./syntheticModel.js";

export class UnknownModelPresetError extends KvaultError {
    readonly code = "unknown_model_preset";

    constructor(readonly presetName: string) {
        super(`Unknown model preset "${presetName}". Choose one of: ${modelPresetNames.join(", ")}.`);
    }
}

export class ModelWriteError extends KvaultError {
    readonly code = "model_write_failed";
}

/** Generates the preset's GGUF at `outPath`; same preset, same bytes. Nothing is left behind on failure. */
export function makeSyntheticModel(presetName: string, outPath: string): WrittenGguf & { readonly numParameters: number } {
    if (!isModelPresetName(presetName)) {
        throw new UnknownModelPresetError(presetName);
    }
    const plan = planSyntheticModel(modelPresets[presetName]);
    try {
        return { ...writeGgufFile(outPath, plan), numParameters: plan.numParameters };
    } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ModelWriteError(`Cannot write the model to ${outPath}: ${reason}. Choose a path in a directory you can write to.`, {
            cause: error
        });
    }
}
