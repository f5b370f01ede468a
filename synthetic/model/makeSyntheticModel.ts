import { writeGgufFile, type WrittenGguf } from "../gguf/writeGgufFile.js";
import { KvaultError } from "../../engine/core/KvaultError.js";
import { isModelQuant, modelQuants, type ModelQuant } from "./modelQuantization.js";
import { allPresetNames, isPresetName, planPresetModel } from "./presetPlans.js";

export class UnknownModelPresetError extends KvaultError {
    readonly code = "unknown_model_preset";

    constructor(readonly presetName: string) {
        super(`Unknown model preset "${presetName}". Choose one of: ${allPresetNames.join(", ")}.`);
    }
}

export class UnknownModelQuantError extends KvaultError {
    readonly code = "unknown_model_quant";

    constructor(readonly quant: string) {
        super(`Unknown quantisation "${quant}". Choose one of: ${modelQuants.join(", ")}.`);
    }
}

export class ModelWriteError extends KvaultError {
    readonly code = "model_write_failed";
}

export interface MakeModelOptions {
    /** How the weight matrices are stored; F16 unless given. */
    readonly quant?: ModelQuant | string;
}

/** Generates the preset's GGUF at `outPath`; same preset and quantisation, same bytes. Nothing is left behind on failure. */
export function makeSyntheticModel(
    presetName: string,
    outPath: string,
    options: MakeModelOptions = {}
): WrittenGguf & { readonly numParameters: number } {
    if (!isPresetName(presetName)) {
        throw new UnknownModelPresetError(presetName);
    }
    const quant = options.quant ?? "f16";
    if (!isModelQuant(quant)) {
        throw new UnknownModelQuantError(quant);
    }
    const plan = planPresetModel(presetName, quant);
    try {
        return { ...writeGgufFile(outPath, plan), numParameters: plan.numParameters };
    } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ModelWriteError(`Cannot write the model to ${outPath}: ${reason}. Choose a path in a directory you can write to.`, {
            cause: error
        });
    }
}
