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

/** `ggml_type` values this writer can produce: plain floats, one element per value. */
export const enum GgmlTensorType {
    F32 = 0,
    F16 = 1
}

export const ggmlTypeBytesPerElement: Readonly<Record<GgmlTensorType, number>> = {
    [GgmlTensorType.F32]: 4,
    [GgmlTensorType.F16]: 2
};

export type GgufScalar =
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
 * `attn_q.weight` mapping n_embd inputs to n_embd outputs is `[n_embd, n_embd]`.
 * `fill` writes the values of elements `[start, start + out.length)` into `out`; the writer
 * calls it chunk by chunk, in order, so a multi-GB tensor never sits in memory.
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
