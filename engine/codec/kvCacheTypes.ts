import { kvCacheTypes, type KvCacheType } from "../../contract/models.js";
import { GgmlTensorType, ggmlTypeTraits } from "../gguf/ggufTypes.js";

// The types the engine keeps K and V in (contract/models.ts), one type for both caches. F16 is
// llama.cpp's default; Q8_0 and Q4_0 store each run of 32 values of a row as one block (Q8_0: an
// F16 scale and 32 int8, 34 bytes; Q4_0: an F16 scale and 32 nibbles, 18 bytes), which llama.cpp
// allows only with flash attention: without it V is stored transposed, one element per position,
// and a block cannot be split across positions (src/llama-context.cpp: "quantized V cache
// requires flash_attn").
export { kvCacheTypes, type KvCacheType };

export interface KvCacheTypeTraits {
    /** ggml's type id, as llama.cpp writes it into a state's K and V sections. */
    readonly ggmlType: GgmlTensorType;
    /** ggml's name, as node-llama-cpp takes it (`experimentalKvCacheKeyType`). */
    readonly ggmlName: "F16" | "Q8_0" | "Q4_0";
    readonly quantized: boolean;
}

export const kvCacheTypeTraits: Readonly<Record<KvCacheType, KvCacheTypeTraits>> = {
    f16: { ggmlType: GgmlTensorType.F16, ggmlName: "F16", quantized: false },
    q8_0: { ggmlType: GgmlTensorType.Q8_0, ggmlName: "Q8_0", quantized: true },
    q4_0: { ggmlType: GgmlTensorType.Q4_0, ggmlName: "Q4_0", quantized: true }
};

export function isKvCacheType(value: unknown): value is KvCacheType {
    return typeof value === "string" && (kvCacheTypes as readonly string[]).includes(value);
}

/**
 * Bytes of one position's row of `numValues` values (a layer's K or V over all KV heads):
 * whole blocks, so a page, which holds whole positions, always ends on a block boundary.
 * Undefined when `numValues` is not a whole number of the type's blocks.
 */
export function kvRowBytes(type: KvCacheType, numValues: number): number | undefined {
    const { blockSize, blockBytes } = ggmlTypeTraits[kvCacheTypeTraits[type].ggmlType];
    return numValues % blockSize === 0 ? (numValues / blockSize) * blockBytes : undefined;
}

/** What decides whether a KV cache type can hold a model: its heads' widths, from the GGUF header. */
export interface KvHeadGeometry {
    readonly architecture: string;
    /** Values of one K head and one V head (`n_embd_head_k`, `n_embd_head_v`). */
    readonly kHeadSize: number;
    readonly vHeadSize: number;
}

/**
 * Why `type` cannot hold this model's KV, in words with the numbers, or undefined when it can.
 * llama.cpp checks the same before it creates a context, but answers only with a null context
 * (node-llama-cpp's "Failed to create context"); asking first gives the reason.
 */
export function whyKvCacheTypeRefused(type: KvCacheType, flashAttention: boolean, heads: KvHeadGeometry): string | undefined {
    const { ggmlType, ggmlName, quantized } = kvCacheTypeTraits[type];
    if (!quantized) {
        return undefined;
    }
    if (!flashAttention) {
        return `a ${ggmlName} KV cache needs flash attention: without it llama.cpp keeps V transposed, one element per position, and a ${ggmlName} block spans 32 values`;
    }
    const { blockSize } = ggmlTypeTraits[ggmlType];
    for (const [part, size] of [
        ["K", heads.kHeadSize],
        ["V", heads.vHeadSize]
    ] as const) {
        if (size % blockSize !== 0) {
            return `the ${heads.architecture} model's ${part} heads are ${size} values wide, not a whole number of ${ggmlName}'s ${blockSize}-value blocks`;
        }
    }
    return undefined;
}
