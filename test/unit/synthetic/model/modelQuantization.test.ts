import { describe, expect, it } from "vitest";
import { GgmlTensorType } from "../../../../engine/gguf/ggufTypes.js";
import { isModelQuant, matrixTypeFor, quantTraits } from "../../../../synthetic/model/modelQuantization.js";

describe("matrixTypeFor", () => {
    it("stores matrices as the quantisation asked for when their rows are whole blocks", () => {
        expect(matrixTypeFor("f16", 64)).toBe(GgmlTensorType.F16);
        expect(matrixTypeFor("q8_0", 64)).toBe(GgmlTensorType.Q8_0);
        expect(matrixTypeFor("q4_0", 896)).toBe(GgmlTensorType.Q4_0);
        expect(matrixTypeFor("q4_k", 2048)).toBe(GgmlTensorType.Q4_K);
    });

    it("falls back as the file type allows: Q4_K to Q4_0 for rows of 32s (Qwen2.5 0.5B's 896), anything to F16 otherwise", () => {
        expect(matrixTypeFor("q4_k", 896)).toBe(GgmlTensorType.Q4_0);
        expect(matrixTypeFor("q4_k", 48)).toBe(GgmlTensorType.F16);
        expect(matrixTypeFor("q8_0", 48)).toBe(GgmlTensorType.F16);
    });

    it("writes llama.cpp's file types", () => {
        expect(quantTraits.f16.fileType).toBe(1); // LLAMA_FTYPE_MOSTLY_F16
        expect(quantTraits.q4_0.fileType).toBe(2); // LLAMA_FTYPE_MOSTLY_Q4_0
        expect(quantTraits.q8_0.fileType).toBe(7); // LLAMA_FTYPE_MOSTLY_Q8_0
        expect(quantTraits.q4_k.fileType).toBe(14); // LLAMA_FTYPE_MOSTLY_Q4_K_S
        expect(isModelQuant("q4_k")).toBe(true);
        expect(isModelQuant("Q4_K_M")).toBe(false);
    });
});
