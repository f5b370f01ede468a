import { describe, expect, it } from "vitest";
import { float16BitsToFloat32, float32ToFloat16Bits } from "../../../../synthetic/gguf/float16.js";
import { GgmlTensorType, tensorDataBytes } from "../../../../engine/gguf/ggufTypes.js";
import { dequantizeQ4_K, Q4_K_BLOCK_BYTES, quantizeQ4_K } from "../../../../synthetic/gguf/quantizeQ4K.js";
import { SeededRandom } from "../../../../synthetic/model/SeededRandom.js";

/** A block_q4_K built by hand, field by field, as ggml-common.h lays it out. */
function handBlock(d: number, dmin: number, scales: readonly number[], mins: readonly number[], levels: readonly number[]): Uint8Array {
    const bytes = new Uint8Array(144);
    const dBits = float32ToFloat16Bits(d);
    const mBits = float32ToFloat16Bits(dmin);
    bytes.set([dBits & 0xff, dBits >>> 8, mBits & 0xff, mBits >>> 8], 0);
    // 6-bit scales and mins: sub-blocks 0–3 in the low 6 bits of bytes 0–3 (scales) and 4–7 (mins);
    // sub-blocks 4–7 as low nibbles in bytes 8–11, their top 2 bits in the top 2 bits of bytes 0–7.
    for (let j = 0; j < 8; j++) {
        if (j < 4) {
            bytes[4 + j] = bytes[4 + j]! | scales[j]!;
            bytes[4 + j + 4] = bytes[4 + j + 4]! | mins[j]!;
        } else {
            bytes[4 + j + 4] = (scales[j]! & 0x0f) | ((mins[j]! & 0x0f) << 4);
            bytes[4 + j - 4] = bytes[4 + j - 4]! | ((scales[j]! >>> 4) << 6);
            bytes[4 + j] = bytes[4 + j]! | ((mins[j]! >>> 4) << 6);
        }
    }
    // levels: each 64-element group is 32 bytes, elements 0–31 low nibbles, 32–63 high nibbles
    for (let group = 0; group < 4; group++) {
        for (let l = 0; l < 32; l++) {
            bytes[16 + group * 32 + l] = levels[group * 64 + l]! | (levels[group * 64 + 32 + l]! << 4);
        }
    }
    return bytes;
}

describe("Q4_K super-blocks (block_q4_K: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles)", () => {
    it("are 144 bytes per 256 elements", () => {
        expect(Q4_K_BLOCK_BYTES).toBe(144);
        expect(tensorDataBytes(GgmlTensorType.Q4_K, 512)).toBe(288);
    });

    it("read x = d·scale·q − dmin·min for each sub-block of 32, with the scales packed as get_scale_min_k4 unpacks them", () => {
        const scales = [1, 63, 17, 40, 33, 62, 5, 48]; // sub-blocks 4–7 use the high bits
        const mins = [0, 2, 63, 9, 50, 16, 31, 60];
        const levels = Array.from({ length: 256 }, (_, i) => (i * 5 + (i >> 5)) % 16);
        const bytes = handBlock(0.25, 0.125, scales, mins, levels);
        const values = new Float32Array(256);
        dequantizeQ4_K(bytes, values);
        values.forEach((value, i) => {
            const sub = i >> 5;
            expect(value, `element ${i}`).toBe(Math.fround(0.25 * scales[sub]! * levels[i]! - 0.125 * mins[sub]!));
        });
    });

    it("quantizes so that its own levels, scales and mins are what the reader finds", () => {
        const random = new SeededRandom(3);
        const values = Float32Array.from({ length: 256 * 4 }, () => random.nextSymmetric(1) + 0.3 * random.nextSymmetric(1) ** 3);
        const bytes = new Uint8Array(144 * 4);
        quantizeQ4_K(values, bytes);
        const back = new Float32Array(values.length);
        dequantizeQ4_K(bytes, back);

        let squaredError = 0;
        let squaredValue = 0;
        for (let i = 0; i < values.length; i++) {
            squaredError += (back[i]! - values[i]!) ** 2;
            squaredValue += values[i]! ** 2;
        }
        // 4 bits with a per-32 scale and min: the error is a few percent of the signal, never more
        expect(Math.sqrt(squaredError / squaredValue)).toBeLessThan(0.1);
        for (let block = 0; block < 4; block++) {
            const d = float16BitsToFloat32(bytes[block * 144]! | (bytes[block * 144 + 1]! << 8));
            const dmin = float16BitsToFloat32(bytes[block * 144 + 2]! | (bytes[block * 144 + 3]! << 8));
            expect(d).toBeGreaterThan(0);
            expect(dmin).toBeGreaterThanOrEqual(0);
            // a level is at most one step off: each element's step is d·scale ≤ 63·d
            for (let i = 0; i < 256; i++) {
                expect(Math.abs(back[block * 256 + i]! - values[block * 256 + i]!)).toBeLessThanOrEqual(63 * d);
            }
        }
    });

    it("writes a constant negative block as its min alone: every element the same, off only by dmin's f16 rounding", () => {
        const bytes = new Uint8Array(144);
        quantizeQ4_K(new Float32Array(256).fill(-0.5), bytes);
        const back = new Float32Array(256);
        dequantizeQ4_K(bytes, back);
        expect(new Set(back).size).toBe(1);
        expect(back[0]).toBeCloseTo(-0.5, 3);
        expect(bytes.subarray(16).every((byte) => byte === 0)).toBe(true); // all levels 0
    });
});
