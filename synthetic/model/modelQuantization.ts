import { GgmlTensorType, ggmlTypeTraits } from "../../engine/gguf/ggufTypes.js";

/** How a generated model stores its weight matrices. Norms, biases and other vectors are always F32, as llama.cpp's quantizer keeps them. */
export type ModelQuant = "f16" | "q8_0" | "q4_0" | "q4_k";

export const modelQuants: readonly ModelQuant[] = ["f16", "q8_0", "q4_0", "q4_k"];

export function isModelQuant(name: string): name is ModelQuant {
    return (modelQuants as readonly string[]).includes(name);
}

interface QuantTraits {
    /** The matrix type asked for. */
    readonly type: GgmlTensorType;
    /** `general.file_type` (llama.h's llama_ftype): what llama.cpp and node-llama-cpp report as the file's quantisation. */
    readonly fileType: number;
    /** The file-type name as llama.cpp prints it. */
    readonly label: string;
    /** What a matrix whose rows are not whole blocks of `type` is stored as instead, in order of preference. */
    readonly fallbacks: readonly GgmlTensorType[];
}

export const quantTraits: Readonly<Record<ModelQuant, QuantTraits>> = {
    f16: { type: GgmlTensorType.F16, fileType: 1, label: "F16", fallbacks: [] },
    q8_0: { type: GgmlTensorType.Q8_0, fileType: 7, label: "Q8_0", fallbacks: [GgmlTensorType.F16] },
    q4_0: { type: GgmlTensorType.Q4_0, fileType: 2, label: "Q4_0", fallbacks: [GgmlTensorType.F16] },
    // LLAMA_FTYPE_MOSTLY_Q4_K_S: every matrix Q4_K (Q4_K_M would keep some in Q6_K). llama.cpp's
    // quantizer stores rows that are not whole 256-element super-blocks as Q5_0; this writer has
    // no Q5_0 and stores them as Q4_0, the 32-element 4-bit type.
    q4_k: { type: GgmlTensorType.Q4_K, fileType: 14, label: "Q4_K_S", fallbacks: [GgmlTensorType.Q4_0, GgmlTensorType.F16] }
};

/** The type a weight matrix with rows of `rowLength` elements is stored as under `quant`. */
export function matrixTypeFor(quant: ModelQuant, rowLength: number): GgmlTensorType {
    const { type, fallbacks } = quantTraits[quant];
    return [type, ...fallbacks].find((candidate) => rowLength % ggmlTypeTraits[candidate].blockSize === 0) ?? GgmlTensorType.F16;
}
