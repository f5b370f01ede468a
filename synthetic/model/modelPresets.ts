// Geometries of the generated models. Weights are seeded noise: the files are real llama-architecture
// GGUFs that node-llama-cpp loads and runs, but their output is not language.

export interface ModelPreset {
    readonly name: ModelPresetName;
    readonly description: string;
    readonly seed: number;
    readonly numLayers: number;
    /** Width of the residual stream (`n_embd`). */
    readonly embeddingLength: number;
    readonly numHeads: number;
    readonly numKvHeads: number;
    readonly feedForwardLength: number;
    readonly vocabularySize: number;
    /** Training context length written to the metadata, in tokens. */
    readonly contextLength: number;
    /**
     * Whether the output projection reuses token_embd. A tied random model maps each token to
     * itself (the logit of the input token dominates), so test presets keep their own output.weight.
     */
    readonly tiedOutput: boolean;
    /** Matrices in F16 unless a quantisation is asked for (modelQuantization.ts); norms are always F32, as llama.cpp expects. */
    readonly matrixType: "f16";
}

export type ModelPresetName = "tiny" | "small" | "1b";

export const modelPresets: Readonly<Record<ModelPresetName, ModelPreset>> = {
    tiny: {
        name: "tiny",
        description: "under 1 MB; loads and generates in well under a second; for tests",
        seed: 0x7141_0001,
        numLayers: 2,
        embeddingLength: 128,
        numHeads: 4,
        numKvHeads: 2,
        feedForwardLength: 256,
        vocabularySize: 512,
        contextLength: 4096,
        tiedOutput: false,
        matrixType: "f16"
    },
    small: {
        name: "small",
        description: "about 125M parameters (12 layers, 768 wide, 4 KV heads), 32k vocabulary, F16; for CPU benchmarks",
        seed: 0x7141_0002,
        numLayers: 12,
        embeddingLength: 768,
        numHeads: 12,
        numKvHeads: 4,
        feedForwardLength: 2048,
        vocabularySize: 32_000,
        contextLength: 16_384,
        tiedOutput: false,
        matrixType: "f16"
    },
    "1b": {
        name: "1b",
        description: "the geometry of Llama 3.2 1B (16 layers, 2048 wide, 8 KV heads, 128k vocabulary); for GPU benchmarks",
        seed: 0x7141_0003,
        numLayers: 16,
        embeddingLength: 2048,
        numHeads: 32,
        numKvHeads: 8,
        feedForwardLength: 8192,
        vocabularySize: 128_256,
        contextLength: 131_072,
        tiedOutput: true,
        matrixType: "f16"
    }
};

export const modelPresetNames = Object.keys(modelPresets) as ModelPresetName[];

export function isModelPresetName(name: string): name is ModelPresetName {
    return Object.hasOwn(modelPresets, name);
}

export function headDimension(preset: ModelPreset): number {
    return preset.embeddingLength / preset.numHeads;
}
