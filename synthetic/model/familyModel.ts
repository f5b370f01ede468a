import { GgmlTensorType, numTensorElements, type GgufMetadataEntry, type GgufTensorSpec } from "../../engine/gguf/ggufTypes.js";
import { chatTemplateText } from "./familyChatTemplates.js";
import { modelFamilies, type FamilyPreset } from "./familyPresets.js";
import { familyTokenizerMetadata } from "./familyVocabularies.js";
import { matrixTypeFor, quantTraits, type ModelQuant } from "./modelQuantization.js";
import { onesVector, seededMatrix, seededTensor } from "./seededTensors.js";
import type { SyntheticModelPlan } from "./syntheticModel.js";

/** Bumped whenever the bytes a family preset produces change, so cached files are regenerated. */
export const FAMILY_MODEL_VERSION = 1;

const u32 = (key: string, value: number): GgufMetadataEntry => ({ key, value: { type: "u32", value } });
const f32 = (key: string, value: number): GgufMetadataEntry => ({ key, value: { type: "f32", value } });
const text = (key: string, value: string): GgufMetadataEntry => ({ key, value: { type: "string", value } });

/**
 * The bound of token_embd's uniform noise. A tied model scores every token by its embedding's dot
 * product with the last hidden state, which holds the input token's own embedding: with embeddings
 * as large as the layers' output the input token keeps winning and generation repeats one token.
 * Small ones leave the layers in charge (each layer normalizes its input, so they see the same
 * directions). Gemma scales embeddings by √n_embd on input and normalizes every layer's output,
 * so its bound is taken after that scaling.
 */
function embeddingBound(preset: FamilyPreset): number {
    if (!preset.tiedOutput) {
        return 1;
    }
    return modelFamilies[preset.family].architecture === "gemma3" ? 0.5 / Math.sqrt(preset.embeddingLength) : 0.05;
}

function architectureMetadata(preset: FamilyPreset, numTokens: number): GgufMetadataEntry[] {
    const family = modelFamilies[preset.family];
    const arch = family.architecture;
    const headsAreEmbedding = preset.headDimension * preset.numHeads === preset.embeddingLength;
    const entries = [
        u32(`${arch}.context_length`, preset.contextLength),
        u32(`${arch}.embedding_length`, preset.embeddingLength),
        u32(`${arch}.block_count`, preset.numLayers),
        u32(`${arch}.feed_forward_length`, preset.feedForwardLength),
        u32(`${arch}.attention.head_count`, preset.numHeads),
        u32(`${arch}.attention.head_count_kv`, preset.numKvHeads),
        f32(`${arch}.attention.layer_norm_rms_epsilon`, family.rmsEpsilon),
        f32(`${arch}.rope.freq_base`, family.ropeFreqBase)
    ];
    if (!headsAreEmbedding || arch === "gemma3") {
        // Gemma's converter always writes them; Qwen3's when heads are wider than n_embd / n_head
        entries.push(
            u32(`${arch}.attention.key_length`, preset.headDimension),
            u32(`${arch}.attention.value_length`, preset.headDimension)
        );
    }
    if (arch === "llama") {
        entries.push(u32("llama.rope.dimension_count", preset.headDimension), u32("llama.vocab_size", numTokens));
    }
    if (arch === "phi3") {
        entries.push(
            u32("phi3.rope.dimension_count", preset.headDimension),
            u32("phi3.rope.scaling.original_context_length", preset.contextLength)
        );
    }
    if (preset.slidingWindow !== undefined) {
        entries.push(u32(`${arch}.attention.sliding_window`, preset.slidingWindow));
    }
    return entries;
}

function layerTensors(preset: FamilyPreset, quant: ModelQuant, layer: number): GgufTensorSpec[] {
    const family = modelFamilies[preset.family];
    const arch = family.architecture;
    const blk = `blk.${layer}`;
    const nEmbd = preset.embeddingLength;
    const nQ = preset.numHeads * preset.headDimension;
    const nKv = preset.numKvHeads * preset.headDimension;
    const nFf = preset.feedForwardLength;
    const matrix = (name: string, rowLength: number, numRows: number): GgufTensorSpec =>
        seededMatrix(preset.seed, `${blk}.${name}`, [rowLength, numRows], rowLength, matrixTypeFor(quant, rowLength));
    const norm = (name: string, length: number): GgufTensorSpec => onesVector(`${blk}.${name}`, length);
    const bias = (name: string, length: number): GgufTensorSpec =>
        seededTensor(preset.seed, `${blk}.${name}`, [length], 0.1, GgmlTensorType.F32);

    if (arch === "phi3") {
        // fused: Q, K and V in one projection; gate and up in one, gate first
        return [
            norm("attn_norm.weight", nEmbd),
            matrix("attn_qkv.weight", nEmbd, nQ + 2 * nKv),
            matrix("attn_output.weight", nQ, nEmbd),
            norm("ffn_norm.weight", nEmbd),
            matrix("ffn_up.weight", nEmbd, 2 * nFf),
            matrix("ffn_down.weight", nFf, nEmbd)
        ];
    }
    const tensors = [
        norm("attn_norm.weight", nEmbd),
        matrix("attn_q.weight", nEmbd, nQ),
        matrix("attn_k.weight", nEmbd, nKv),
        matrix("attn_v.weight", nEmbd, nKv)
    ];
    if (family.attentionBias) {
        tensors.push(bias("attn_q.bias", nQ), bias("attn_k.bias", nKv), bias("attn_v.bias", nKv));
    }
    if (arch === "qwen3" || arch === "gemma3") {
        tensors.push(norm("attn_q_norm.weight", preset.headDimension), norm("attn_k_norm.weight", preset.headDimension));
    }
    tensors.push(matrix("attn_output.weight", nQ, nEmbd));
    if (arch === "gemma3") {
        tensors.push(norm("post_attention_norm.weight", nEmbd));
    }
    tensors.push(
        norm("ffn_norm.weight", nEmbd),
        matrix("ffn_gate.weight", nEmbd, nFf),
        matrix("ffn_up.weight", nEmbd, nFf),
        matrix("ffn_down.weight", nFf, nEmbd)
    );
    if (arch === "gemma3") {
        tensors.push(norm("post_ffw_norm.weight", nEmbd));
    }
    return tensors;
}

/** A family preset's model: the family's architecture, tokenizer and chat template, seeded weights, matrices as `quant`. */
export function planFamilyModel(preset: FamilyPreset, quant: ModelQuant = "f16"): SyntheticModelPlan {
    const family = modelFamilies[preset.family];
    const tokenizer = familyTokenizerMetadata(family.vocabulary);
    const tokens = tokenizer.find(({ key }) => key === "tokenizer.ggml.tokens")!.value.value as readonly string[];
    const numTokens = tokens.length;
    const { lineage } = family;

    const metadata: GgufMetadataEntry[] = [
        text("general.architecture", family.architecture),
        text("general.name", `Kvault synthetic ${preset.name}`),
        text("general.basename", lineage.basename),
        text("general.size_label", lineage.sizeLabel),
        ...(lineage.finetune === "" ? [] : [text("general.finetune", lineage.finetune)]),
        text(
            "general.description",
            `Seeded random weights in the ${family.architecture} architecture with ${family.realModel}'s tokenizer and chat template ` +
                `(${preset.description}); the output is not language.`
        ),
        u32("general.file_type", quantTraits[quant].fileType),
        u32("general.quantization_version", 2),
        ...architectureMetadata(preset, numTokens),
        ...tokenizer,
        text("tokenizer.chat_template", chatTemplateText(family.chatTemplate)),
        text("kvault.preset", preset.name),
        u32("kvault.seed", preset.seed),
        u32("kvault.generator_version", FAMILY_MODEL_VERSION)
    ];

    const nEmbd = preset.embeddingLength;
    const embeddingType = matrixTypeFor(quant, nEmbd);
    const tensors: GgufTensorSpec[] = [
        seededTensor(preset.seed, "token_embd.weight", [nEmbd, numTokens], embeddingBound(preset), embeddingType),
        onesVector("output_norm.weight", nEmbd)
    ];
    if (!preset.tiedOutput) {
        tensors.push(seededMatrix(preset.seed, "output.weight", [nEmbd, numTokens], nEmbd, embeddingType));
    }
    for (let layer = 0; layer < preset.numLayers; layer++) {
        tensors.push(...layerTensors(preset, quant, layer));
    }
    const numParameters = tensors.reduce((sum, tensor) => sum + numTensorElements(tensor.dims), 0);
    return { metadata, tensors, numParameters };
}
