import { describe, expect, it } from "vitest";
import { float16BitsToFloat32, float32ToFloat16Bits } from "../../../../synthetic/gguf/float16.js";

describe("float32ToFloat16Bits", () => {
    it("encodes exact values", () => {
        expect(float32ToFloat16Bits(0)).toBe(0x0000);
        expect(float32ToFloat16Bits(-0)).toBe(0x8000);
        expect(float32ToFloat16Bits(1)).toBe(0x3c00);
        expect(float32ToFloat16Bits(-2)).toBe(0xc000);
        expect(float32ToFloat16Bits(65504)).toBe(0x7bff);
        expect(float32ToFloat16Bits(2 ** -14)).toBe(0x0400); // smallest normal
        expect(float32ToFloat16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    });

    it("rounds to nearest, ties to even", () => {
        // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties go to the even mantissa, 1.
        expect(float32ToFloat16Bits(1 + 2 ** -11)).toBe(0x3c00);
        // 1 + 3·2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
        expect(float32ToFloat16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02);
        expect(float32ToFloat16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01);
    });

    it("saturates to infinity and keeps NaN a NaN", () => {
        expect(float32ToFloat16Bits(65520)).toBe(0x7c00);
        expect(float32ToFloat16Bits(-Infinity)).toBe(0xfc00);
        expect(Number.isNaN(float16BitsToFloat32(float32ToFloat16Bits(NaN)))).toBe(true);
        expect(float32ToFloat16Bits(2 ** -26)).toBe(0x0000);
    });

    it("round-trips every finite half through float32", () => {
        for (let bits = 0; bits < 0x10000; bits++) {
            if ((bits & 0x7c00) === 0x7c00) {
                continue;
            } // Inf and NaN
            expect(float32ToFloat16Bits(float16BitsToFloat32(bits))).toBe(bits);
        }
    });
});
