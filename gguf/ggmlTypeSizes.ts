// The tensor types a GGUF file may name (ggml's `enum ggml_type`) and how many bytes their data
// takes: ggml stores a tensor in blocks of `blockElements` elements, `blockBytes` bytes each. The
// values are ggml's type traits of the llama.cpp node-llama-cpp 3.21 ships (checked against its
// native binding in test/model/host/models/readGgufHeader.test.ts).

export interface GgmlTypeSize {
    readonly name: string;
    /** Elements per block; a row's length must be a multiple of it. */
    readonly blockElements: number;
    readonly blockBytes: number;
}

/** One past the highest type id llama.cpp knows (GGML_TYPE_COUNT). */
export const GGML_TYPE_COUNT = 43;

const known: Readonly<Record<number, GgmlTypeSize>> = {
    0: { name: "F32", blockElements: 1, blockBytes: 4 },
    1: { name: "F16", blockElements: 1, blockBytes: 2 },
    2: { name: "Q4_0", blockElements: 32, blockBytes: 18 },
    3: { name: "Q4_1", blockElements: 32, blockBytes: 20 },
    6: { name: "Q5_0", blockElements: 32, blockBytes: 22 },
    7: { name: "Q5_1", blockElements: 32, blockBytes: 24 },
    8: { name: "Q8_0", blockElements: 32, blockBytes: 34 },
    9: { name: "Q8_1", blockElements: 32, blockBytes: 36 },
    10: { name: "Q2_K", blockElements: 256, blockBytes: 84 },
    11: { name: "Q3_K", blockElements: 256, blockBytes: 110 },
    12: { name: "Q4_K", blockElements: 256, blockBytes: 144 },
    13: { name: "Q5_K", blockElements: 256, blockBytes: 176 },
    14: { name: "Q6_K", blockElements: 256, blockBytes: 210 },
    15: { name: "Q8_K", blockElements: 256, blockBytes: 292 },
    16: { name: "IQ2_XXS", blockElements: 256, blockBytes: 66 },
    17: { name: "IQ2_XS", blockElements: 256, blockBytes: 74 },
    18: { name: "IQ3_XXS", blockElements: 256, blockBytes: 98 },
    19: { name: "IQ1_S", blockElements: 256, blockBytes: 50 },
    20: { name: "IQ4_NL", blockElements: 32, blockBytes: 18 },
    21: { name: "IQ3_S", blockElements: 256, blockBytes: 110 },
    22: { name: "IQ2_S", blockElements: 256, blockBytes: 82 },
    23: { name: "IQ4_XS", blockElements: 256, blockBytes: 136 },
    24: { name: "I8", blockElements: 1, blockBytes: 1 },
    25: { name: "I16", blockElements: 1, blockBytes: 2 },
    26: { name: "I32", blockElements: 1, blockBytes: 4 },
    27: { name: "I64", blockElements: 1, blockBytes: 8 },
    28: { name: "F64", blockElements: 1, blockBytes: 8 },
    29: { name: "IQ1_M", blockElements: 256, blockBytes: 56 },
    30: { name: "BF16", blockElements: 1, blockBytes: 2 },
    34: { name: "TQ1_0", blockElements: 256, blockBytes: 54 },
    35: { name: "TQ2_0", blockElements: 256, blockBytes: 66 },
    39: { name: "MXFP4", blockElements: 32, blockBytes: 17 },
    40: { name: "NVFP4", blockElements: 64, blockBytes: 36 },
    41: { name: "Q1_0", blockElements: 128, blockBytes: 18 },
    42: { name: "Q2_0", blockElements: 64, blockBytes: 18 }
};

/** Ids ggml once had and no longer loads from a file (Q4_2, Q4_3, and the interleaved Q4_0 and IQ4_NL layouts). */
const retired: Readonly<Record<number, string>> = {
    4: "Q4_2",
    5: "Q4_3",
    31: "Q4_0_4_4",
    32: "Q4_0_4_8",
    33: "Q4_0_8_8",
    36: "IQ4_NL_4_4",
    37: "IQ4_NL_4_8",
    38: "IQ4_NL_8_8"
};

export type GgmlTypeLookup =
    | { readonly kind: "known"; readonly size: GgmlTypeSize }
    | { readonly kind: "retired"; readonly name: string }
    | { readonly kind: "unknown" };

export function lookUpGgmlType(id: number): GgmlTypeLookup {
    const size = known[id];
    if (size !== undefined) {
        return { kind: "known", size };
    }
    const name = retired[id];
    return name !== undefined ? { kind: "retired", name } : { kind: "unknown" };
}
