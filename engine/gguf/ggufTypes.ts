// GGUF v3 constants, as defined by ggml's gguf.h and read by node-llama-cpp's GGUF parser.

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** `gguf_type`: the type tag of a metadata value. */
export const enum GgufValueType {
    UInt8 = 0,
    Int8 = 1,
    UInt16 = 2,
    Int16 = 3,
    UInt32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    UInt64 = 10,
    Int64 = 11,
    Float64 = 12
}

/**
 * `ggml_type` values this writer can produce (ggml.h): plain floats, one element per value, and
 * block-quantized types, whose blocks of `blockSize` consecutive elements along a row (`ne0`) are
 * stored as `blockBytes` bytes each (ggml-common.h: block_q4_0, block_q8_0, block_q4_K).
 */
export const enum GgmlTensorType {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q8_0 = 8,
    Q4_K = 12
}

export interface GgmlTypeTraits {
    /** ggml's own name for the type, as llama.cpp and node-llama-cpp print it. */
    readonly name: string;
    /** Elements per block: 1 for plain floats. A row's length must be a multiple of it. */
    readonly blockSize: number;
    /** Bytes per block. */
    readonly blockBytes: number;
}

export const ggmlTypeTraits: Readonly<Record<GgmlTensorType, GgmlTypeTraits>> = {
    [GgmlTensorType.F32]: { name: "F32", blockSize: 1, blockBytes: 4 },
    [GgmlTensorType.F16]: { name: "F16", blockSize: 1, blockBytes: 2 },
    // d (f16) and 32 nibbles
    [GgmlTensorType.Q4_0]: { name: "Q4_0", blockSize: 32, blockBytes: 18 },
    // d (f16) and 32 int8
    [GgmlTensorType.Q8_0]: { name: "Q8_0", blockSize: 32, blockBytes: 34 },
    // d, dmin (f16), 12 bytes of 6-bit scales and mins, 256 nibbles
    [GgmlTensorType.Q4_K]: { name: "Q4_K", blockSize: 256, blockBytes: 144 }
};

/** Bytes of a tensor's data; `numElements` is a whole number of blocks (a row is too, see GgufTensorSpec). */
export function tensorDataBytes(type: GgmlTensorType, numElements: number): number {
    const { blockSize, blockBytes } = ggmlTypeTraits[type];
    return (numElements / blockSize) * blockBytes;
}

export type GgufScalar =
    // llama.cpp's split.no and split.count are u16.
    | { readonly type: "u16"; readonly value: number }
    | { readonly type: "u32"; readonly value: number }
    | { readonly type: "i32"; readonly value: number }
    | { readonly type: "u64"; readonly value: bigint }
    | { readonly type: "f32"; readonly value: number }
    | { readonly type: "bool"; readonly value: boolean }
    | { readonly type: "string"; readonly value: string };

export type GgufArray =
    | { readonly type: "string[]"; readonly value: readonly string[] }
    | { readonly type: "f32[]"; readonly value: readonly number[] | Float32Array }
    | { readonly type: "i32[]"; readonly value: readonly number[] | Int32Array };

export type GgufValue = GgufScalar | GgufArray;

export interface GgufMetadataEntry {
    readonly key: string;
    readonly value: GgufValue;
}

/**
 * One tensor to write. `dims` are in ggml order (`ne0` first: the row length), so a llama
 * `attn_q.weight` mapping n_embd inputs to n_embd outputs is `[n_embd, n_embd]`. For a quantized
 * type `ne0` is a multiple of the type's block size (the writer refuses anything else).
 * `fill` writes the values of elements `[start, start + out.length)` into `out`; the writer
 * calls it chunk by chunk, in order, so a multi-GB tensor never sits in memory. The values are
 * F32; the writer converts or quantizes them to `type`.
 */
export interface GgufTensorSpec {
    readonly name: string;
    readonly dims: readonly number[];
    readonly type: GgmlTensorType;
    readonly fill: (out: Float32Array, start: number) => void;
}

export function numTensorElements(dims: readonly number[]): number {
    return dims.reduce((product, dim) => product * dim, 1);
}

export function alignUp(offset: number, alignment: number): number {
    return Math.ceil(offset / alignment) * alignment;
}
