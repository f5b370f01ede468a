import { encodeGgufHeader } from "../gguf/GgufHeaderEncoder.js";
import { GGUF_DEFAULT_ALIGNMENT } from "../../engine/gguf/ggufTypes.js";
import { modelQuants, quantTraits, type ModelQuant } from "./modelQuantization.js";
import { allPresetNames, describePreset, planPresetModel, type PresetSummary } from "./presetPlans.js";

export interface PresetSizes extends PresetSummary {
    readonly numParameters: number;
    readonly numTokens: number;
    /** The file's size in bytes, per quantisation. */
    readonly fileBytes: Readonly<Record<ModelQuant, number>>;
}

/** A preset's sizes, from its plan alone: nothing is generated or written. */
export function presetSizes(name: string): PresetSizes {
    const fileBytes = {} as Record<ModelQuant, number>;
    let numParameters = 0;
    let numTokens = 0;
    for (const quant of modelQuants) {
        const plan = planPresetModel(name, quant);
        fileBytes[quant] = encodeGgufHeader(plan.metadata, plan.tensors, GGUF_DEFAULT_ALIGNMENT).totalBytes;
        numParameters = plan.numParameters;
        const tokens = plan.metadata.find(({ key }) => key === "tokenizer.ggml.tokens")?.value;
        numTokens = tokens?.type === "string[]" ? tokens.value.length : 0;
    }
    return { ...describePreset(name), numParameters, numTokens, fileBytes };
}

function compact(count: number): string {
    if (count >= 1e9) {
        return `${(count / 1e9).toFixed(2)}B`;
    }
    if (count >= 1e6) {
        return `${(count / 1e6).toFixed(1)}M`;
    }
    return `${(count / 1e3).toFixed(0)}k`;
}

function megabytes(numBytes: number): string {
    return `${(numBytes / 1e6).toFixed(numBytes < 1e7 ? 1 : 0)} MB`;
}

/** `make-model --list`: every preset with its architecture, parameters, vocabulary and file size per quantisation. */
export function formatPresetCatalog(sizes: readonly PresetSizes[] = allPresetNames.map(presetSizes)): string {
    const header = ["Preset", "Architecture", "Parameters", "Vocabulary", ...modelQuants.map((quant) => quantTraits[quant].label)];
    const rows = sizes.map((preset) => [
        preset.name,
        preset.architecture,
        compact(preset.numParameters),
        preset.numTokens.toLocaleString("en-US"),
        ...modelQuants.map((quant) => megabytes(preset.fileBytes[quant]))
    ]);
    const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
    const line = (cells: readonly string[]): string =>
        cells.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join("  ");
    const notes = sizes.map((preset) => `  ${preset.name.padEnd(widths[0]!)}  ${preset.description}; tokenizer: ${preset.tokenizer}`);
    return [
        line(header),
        ...rows.map(line),
        "",
        "Presets:",
        ...notes,
        "",
        "File sizes are the whole GGUF: header (with the vocabulary) and weights. Q4_K_S stores matrices whose rows are not",
        "whole 256-element blocks as Q4_0; every quantisation keeps norms and biases in F32."
    ].join("\n");
}
