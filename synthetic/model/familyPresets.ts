// Presets of the model families people run: each family's llama.cpp architecture, its real
// tokenizer and chat template, at a tiny size for tests and at (or near) its smallest real size
// for benchmarks. Weights are seeded noise, as for the other presets: the output is not language.
import { GEMMA3_CHAT_TEMPLATE, MISTRAL_CHAT_TEMPLATE, type ChatTemplateSource } from "./familyChatTemplates.js";
import type { FamilyVocabularyName } from "./familyVocabularies.js";

export type ModelFamily = "llama3" | "qwen2" | "qwen3" | "phi3" | "gemma3" | "mistral";

/** The llama.cpp architecture a file names (general.architecture); it picks the graph and the tensors. */
export type FamilyArchitecture = "llama" | "qwen2" | "qwen3" | "phi3" | "gemma3";

interface FamilyTraits {
    readonly architecture: FamilyArchitecture;
    /** The real model the family's presets stand for, in words. */
    readonly realModel: string;
    readonly vocabulary: FamilyVocabularyName;
    readonly chatTemplate: ChatTemplateSource;
    /**
     * The real model's general.basename, size_label and finetune: node-llama-cpp reads them (with the
     * template) to choose a chat wrapper, so the presets get the wrapper the real model gets.
     */
    readonly lineage: { readonly basename: string; readonly sizeLabel: string; readonly finetune: string };
    readonly ropeFreqBase: number;
    readonly rmsEpsilon: number;
    /** Q/K/V biases (Qwen2). */
    readonly attentionBias: boolean;
}

export const modelFamilies: Readonly<Record<ModelFamily, FamilyTraits>> = {
    llama3: {
        architecture: "llama",
        realModel: "Llama 3.2 1B Instruct",
        vocabulary: "llama3",
        chatTemplate: { kind: "llama.cpp", file: "models/templates/meta-llama-Llama-3.2-3B-Instruct.jinja" },
        lineage: { basename: "Llama-3.2", sizeLabel: "1B", finetune: "Instruct" },
        ropeFreqBase: 500_000,
        rmsEpsilon: 1e-5,
        attentionBias: false
    },
    qwen2: {
        architecture: "qwen2",
        realModel: "Qwen2.5 0.5B Instruct",
        vocabulary: "qwen2.5",
        chatTemplate: { kind: "llama.cpp", file: "models/templates/Qwen-Qwen2.5-7B-Instruct.jinja" },
        lineage: { basename: "Qwen2.5", sizeLabel: "0.5B", finetune: "Instruct" },
        ropeFreqBase: 1_000_000,
        rmsEpsilon: 1e-6,
        attentionBias: true
    },
    qwen3: {
        architecture: "qwen3",
        realModel: "Qwen3 0.6B",
        vocabulary: "qwen3",
        chatTemplate: { kind: "llama.cpp", file: "models/templates/Qwen-Qwen3-0.6B.jinja" },
        lineage: { basename: "Qwen3", sizeLabel: "0.6B", finetune: "" },
        ropeFreqBase: 1_000_000,
        rmsEpsilon: 1e-6,
        attentionBias: false
    },
    phi3: {
        architecture: "phi3",
        realModel: "Phi-3 mini 4k Instruct",
        vocabulary: "phi3",
        chatTemplate: { kind: "vocabulary", vocabulary: "phi3" },
        lineage: { basename: "Phi-3-mini-4k", sizeLabel: "3.8B", finetune: "instruct" },
        ropeFreqBase: 10_000,
        rmsEpsilon: 1e-5,
        attentionBias: false
    },
    gemma3: {
        architecture: "gemma3",
        realModel: "Gemma 3 1B IT",
        vocabulary: "gemma3",
        chatTemplate: { kind: "inline", model: "Gemma 3 IT", template: GEMMA3_CHAT_TEMPLATE },
        lineage: { basename: "gemma-3", sizeLabel: "1B", finetune: "it" },
        ropeFreqBase: 1_000_000,
        rmsEpsilon: 1e-6,
        attentionBias: false
    },
    mistral: {
        architecture: "llama",
        realModel: "Mistral 7B Instruct v0.2",
        vocabulary: "mistral",
        chatTemplate: { kind: "inline", model: "Mistral 7B Instruct v0.2", template: MISTRAL_CHAT_TEMPLATE },
        lineage: { basename: "Mistral", sizeLabel: "7B", finetune: "Instruct-v0.2" },
        ropeFreqBase: 1_000_000,
        rmsEpsilon: 1e-5,
        attentionBias: false
    }
};

export interface FamilyPreset {
    readonly name: FamilyPresetName;
    readonly family: ModelFamily;
    readonly description: string;
    readonly seed: number;
    readonly numLayers: number;
    /** Width of the residual stream (`n_embd`). */
    readonly embeddingLength: number;
    readonly numHeads: number;
    readonly numKvHeads: number;
    /** Width of one head of Q, K and V; written as key_length/value_length when not n_embd / n_head (Qwen3, Gemma 3). */
    readonly headDimension: number;
    readonly feedForwardLength: number;
    /** Training context length written to the metadata, in tokens. */
    readonly contextLength: number;
    /** No output.weight: the output projection reuses token_embd, as the real small models do. */
    readonly tiedOutput: boolean;
    /**
     * Sliding-window attention: the window in tokens, written as `<arch>.attention.sliding_window`.
     * Gemma 3 runs it (five local layers to one global); llama.cpp ignores Phi-3's (its phi3 graph
     * has SWA switched off), as it does for the real Phi-3 mini 4k file.
     */
    readonly slidingWindow?: number;
}

export type FamilyPresetName =
    | "llama3-tiny"
    | "llama3-1b"
    | "qwen2-tiny"
    | "qwen2-0.5b"
    | "qwen3-tiny"
    | "qwen3-0.6b"
    | "phi3-tiny"
    | "phi3-1b"
    | "gemma3-tiny"
    | "gemma3-1b"
    | "mistral-tiny"
    | "mistral-1b";

const TINY = "2 layers, 64 wide; for tests";

export const familyPresets: Readonly<Record<FamilyPresetName, FamilyPreset>> = {
    "llama3-tiny": {
        name: "llama3-tiny",
        family: "llama3",
        description: `Llama 3 architecture, GQA 2:1, tied; ${TINY}`,
        seed: 0x7142_0001,
        numLayers: 2,
        embeddingLength: 64,
        numHeads: 2,
        numKvHeads: 1,
        headDimension: 32,
        feedForwardLength: 128,
        contextLength: 131_072,
        tiedOutput: true
    },
    "llama3-1b": {
        name: "llama3-1b",
        family: "llama3",
        description: "Llama 3.2 1B's geometry (16 layers, 2048 wide, GQA 32:8, tied)",
        seed: 0x7142_0002,
        numLayers: 16,
        embeddingLength: 2048,
        numHeads: 32,
        numKvHeads: 8,
        headDimension: 64,
        feedForwardLength: 8192,
        contextLength: 131_072,
        tiedOutput: true
    },
    "qwen2-tiny": {
        name: "qwen2-tiny",
        family: "qwen2",
        description: `Qwen2 architecture, Q/K/V biases, GQA 2:1, tied; ${TINY}`,
        seed: 0x7142_0003,
        numLayers: 2,
        embeddingLength: 64,
        numHeads: 2,
        numKvHeads: 1,
        headDimension: 32,
        feedForwardLength: 128,
        contextLength: 32_768,
        tiedOutput: true
    },
    "qwen2-0.5b": {
        name: "qwen2-0.5b",
        family: "qwen2",
        description: "Qwen2.5 0.5B's geometry (24 layers, 896 wide, GQA 14:2, tied)",
        seed: 0x7142_0004,
        numLayers: 24,
        embeddingLength: 896,
        numHeads: 14,
        numKvHeads: 2,
        headDimension: 64,
        feedForwardLength: 4864,
        contextLength: 32_768,
        tiedOutput: true
    },
    "qwen3-tiny": {
        name: "qwen3-tiny",
        family: "qwen3",
        description: `Qwen3 architecture, QK-norm, heads wider than n_embd / n_head, GQA 4:2, tied; ${TINY}`,
        seed: 0x7142_0005,
        numLayers: 2,
        embeddingLength: 64,
        numHeads: 4,
        numKvHeads: 2,
        headDimension: 32,
        feedForwardLength: 128,
        contextLength: 40_960,
        tiedOutput: true
    },
    "qwen3-0.6b": {
        name: "qwen3-0.6b",
        family: "qwen3",
        description: "Qwen3 0.6B's geometry (28 layers, 1024 wide, GQA 16:8 of 128, QK-norm, tied)",
        seed: 0x7142_0006,
        numLayers: 28,
        embeddingLength: 1024,
        numHeads: 16,
        numKvHeads: 8,
        headDimension: 128,
        feedForwardLength: 3072,
        contextLength: 40_960,
        tiedOutput: true
    },
    "phi3-tiny": {
        name: "phi3-tiny",
        family: "phi3",
        description: `Phi-3 architecture, fused QKV and gate-up, a 2047-token window llama.cpp ignores; ${TINY}`,
        seed: 0x7142_0007,
        numLayers: 2,
        embeddingLength: 64,
        numHeads: 2,
        numKvHeads: 2,
        headDimension: 32,
        feedForwardLength: 128,
        contextLength: 4096,
        tiedOutput: false,
        slidingWindow: 2047
    },
    "phi3-1b": {
        name: "phi3-1b",
        family: "phi3",
        description: "Phi-3 architecture at about 1B (16 layers, 2048 wide, 32 heads, no GQA, as Phi-3 mini)",
        seed: 0x7142_0008,
        numLayers: 16,
        embeddingLength: 2048,
        numHeads: 32,
        numKvHeads: 32,
        headDimension: 64,
        feedForwardLength: 5632,
        contextLength: 4096,
        tiedOutput: false,
        slidingWindow: 2047
    },
    "gemma3-tiny": {
        name: "gemma3-tiny",
        family: "gemma3",
        description: "Gemma 3 architecture, 6 layers (5 sliding-window of 32 tokens, 1 global), QK-norm, tied; for tests",
        seed: 0x7142_0009,
        numLayers: 6,
        embeddingLength: 64,
        numHeads: 2,
        numKvHeads: 1,
        headDimension: 64,
        feedForwardLength: 128,
        contextLength: 32_768,
        tiedOutput: true,
        slidingWindow: 32
    },
    "gemma3-1b": {
        name: "gemma3-1b",
        family: "gemma3",
        description: "Gemma 3 1B's geometry (26 layers, 1152 wide, 4 heads of 256, 1 KV head, 512-token window)",
        seed: 0x7142_000a,
        numLayers: 26,
        embeddingLength: 1152,
        numHeads: 4,
        numKvHeads: 1,
        headDimension: 256,
        feedForwardLength: 6912,
        contextLength: 32_768,
        tiedOutput: true,
        slidingWindow: 512
    },
    "mistral-tiny": {
        name: "mistral-tiny",
        family: "mistral",
        description: "Mistral (llama architecture), GQA 8:2, 256 wide so every matrix is whole Q4_K blocks; for tests",
        seed: 0x7142_000b,
        numLayers: 2,
        embeddingLength: 256,
        numHeads: 8,
        numKvHeads: 2,
        headDimension: 32,
        feedForwardLength: 256,
        contextLength: 32_768,
        tiedOutput: false
    },
    "mistral-1b": {
        name: "mistral-1b",
        family: "mistral",
        description: "Mistral 7B's shape at about 1B (16 layers, 2048 wide, GQA 32:8, untied)",
        seed: 0x7142_000c,
        numLayers: 16,
        embeddingLength: 2048,
        numHeads: 32,
        numKvHeads: 8,
        headDimension: 64,
        feedForwardLength: 5632,
        contextLength: 32_768,
        tiedOutput: false
    }
};

export const familyPresetNames = Object.keys(familyPresets) as FamilyPresetName[];

export function isFamilyPresetName(name: string): name is FamilyPresetName {
    return Object.hasOwn(familyPresets, name);
}
