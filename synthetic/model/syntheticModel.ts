import type { GgufMetadataEntry, GgufTensorSpec } from "../../engine/gguf/ggufTypes.js";
import { CHAT_ML_TEMPLATE } from "./chatMlTemplate.js";
import { headDimension, type ModelPreset } from "./modelPresets.js";
import { matrixTypeFor, quantTraits, type ModelQuant } from "./modelQuantization.js";
import { onesVector, seededMatrix as seededMatrixOf } from "./seededTensors.js";
import { buildSyntheticVocabulary, specialTokens } from "./syntheticVocabulary.js";

/** Bumped whenever the bytes a preset produces change, so cached files are regenerated. */
export const SYNTHETIC_MODEL_VERSION = 1;

export interface SyntheticModelPlan {
    readonly metadata: readonly GgufMetadataEntry[];
    readonly tensors: readonly GgufTensorSpec[];
    readonly numParameters: number;
}

/** The preset's model; `quant` stores its weight matrices quantized (the F16 default is the file the presets always wrote). */
export function planSyntheticModel(preset: ModelPreset, quant: ModelQuant = "f16"): SyntheticModelPlan {
    const seededMatrix = (name: string, dims: [number, number], fanIn: number): GgufTensorSpec =>
        seededMatrixOf(preset.seed, name, dims, fanIn, matrixTypeFor(quant, dims[0]));
    const nEmbd = preset.embeddingLength;
    const nHeadDim = headDimension(preset);
    const nEmbdKv = nHeadDim * preset.numKvHeads;
    const nFf = preset.feedForwardLength;
    const vocabulary = buildSyntheticVocabulary(preset.vocabularySize);

    const metadata: GgufMetadataEntry[] = [
        { key: "general.architecture", value: { type: "string", value: "llama" } },
        { key: "general.name", value: { type: "string", value: `Kvault synthetic ${preset.name}` } },
        {
            key: "general.description",
            value: { type: "string", value: `Seeded random weights (${preset.description}); the output is not language.` }
        },
        { key: "general.file_type", value: { type: "u32", value: quantTraits[quant].fileType } },
        { key: "general.quantization_version", value: { type: "u32", value: 2 } },
        { key: "llama.context_length", value: { type: "u32", value: preset.contextLength } },
        { key: "llama.embedding_length", value: { type: "u32", value: nEmbd } },
        { key: "llama.block_count", value: { type: "u32", value: preset.numLayers } },
        { key: "llama.feed_forward_length", value: { type: "u32", value: nFf } },
        { key: "llama.attention.head_count", value: { type: "u32", value: preset.numHeads } },
        { key: "llama.attention.head_count_kv", value: { type: "u32", value: preset.numKvHeads } },
        { key: "llama.attention.layer_norm_rms_epsilon", value: { type: "f32", value: 1e-5 } },
        { key: "llama.rope.dimension_count", value: { type: "u32", value: nHeadDim } },
        { key: "llama.rope.freq_base", value: { type: "f32", value: 10_000 } },
        { key: "llama.vocab_size", value: { type: "u32", value: preset.vocabularySize } },
        { key: "tokenizer.ggml.model", value: { type: "string", value: "llama" } },
        { key: "tokenizer.ggml.tokens", value: { type: "string[]", value: vocabulary.tokens } },
        { key: "tokenizer.ggml.scores", value: { type: "f32[]", value: vocabulary.scores } },
        { key: "tokenizer.ggml.token_type", value: { type: "i32[]", value: vocabulary.tokenTypes } },
        { key: "tokenizer.ggml.bos_token_id", value: { type: "u32", value: specialTokens.bos.id } },
        { key: "tokenizer.ggml.eos_token_id", value: { type: "u32", value: specialTokens.eos.id } },
        { key: "tokenizer.ggml.eot_token_id", value: { type: "u32", value: specialTokens.imEnd.id } },
        { key: "tokenizer.ggml.unknown_token_id", value: { type: "u32", value: specialTokens.unknown.id } },
        { key: "tokenizer.ggml.padding_token_id", value: { type: "u32", value: specialTokens.unknown.id } },
        { key: "tokenizer.ggml.add_bos_token", value: { type: "bool", value: true } },
        { key: "tokenizer.ggml.add_eos_token", value: { type: "bool", value: false } },
        { key: "tokenizer.chat_template", value: { type: "string", value: CHAT_ML_TEMPLATE } },
        { key: "kvault.preset", value: { type: "string", value: preset.name } },
        { key: "kvault.seed", value: { type: "u32", value: preset.seed } },
        { key: "kvault.generator_version", value: { type: "u32", value: SYNTHETIC_MODEL_VERSION } }
    ];

    const tensors: GgufTensorSpec[] = [
        seededMatrix("token_embd.weight", [nEmbd, preset.vocabularySize], 3),
        onesVector("output_norm.weight", nEmbd)
    ];
    if (!preset.tiedOutput) {
        // without output.weight, llama.cpp ties the output to token_embd
        tensors.push(seededMatrix("output.weight", [nEmbd, preset.vocabularySize], nEmbd));
    }
    for (let layer = 0; layer < preset.numLayers; layer++) {
        const blk = `blk.${layer}`;
        tensors.push(
            onesVector(`${blk}.attn_norm.weight`, nEmbd),
            seededMatrix(`${blk}.attn_q.weight`, [nEmbd, nEmbd], nEmbd),
            seededMatrix(`${blk}.attn_k.weight`, [nEmbd, nEmbdKv], nEmbd),
            seededMatrix(`${blk}.attn_v.weight`, [nEmbd, nEmbdKv], nEmbd),
            seededMatrix(`${blk}.attn_output.weight`, [nEmbd, nEmbd], nEmbd),
            onesVector(`${blk}.ffn_norm.weight`, nEmbd),
            seededMatrix(`${blk}.ffn_gate.weight`, [nEmbd, nFf], nEmbd),
            seededMatrix(`${blk}.ffn_up.weight`, [nEmbd, nFf], nEmbd),
            seededMatrix(`${blk}.ffn_down.weight`, [nFf, nEmbd], nFf)
        );
    }
    const numParameters = tensors.reduce((sum, tensor) => sum + tensor.dims.reduce((product, dim) => product * dim, 1), 0);
    return { metadata, tensors, numParameters };
}
