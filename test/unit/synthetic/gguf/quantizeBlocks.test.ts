import { describe, expect, it } from "vitest";
import { float16BitsToFloat32, float32ToFloat16Bits } from "../../../../synthetic/gguf/float16.js";
import { GgmlTensorType, ggmlTypeTraits, tensorDataBytes } from "../../../../engine/gguf/ggufTypes.js";
import {
    dequantizeQ4_0,
    dequantizeQ8_0,
    Q4_0_BLOCK_BYTES,
    Q8_0_BLOCK_BYTES,
    quantizeQ4_0,
    quantizeQ8_0
} from "../../../../synthetic/gguf/quantizeBlocks.js";
import { SeededRandom } from "../../../../synthetic/model/SeededRandom.js";

function noise(count: number, seed: number, bound = 1): Float32Array {
    const random = new SeededRandom(seed);
    return Float32Array.from({ length: count }, () => random.nextSymmetric(bound));
}

const halfAt = (bytes: Uint8Array, at: number): number => float16BitsToFloat32(bytes[at]! | (bytes[at + 1]! << 8));

describe("Q8_0 blocks (ggml-common.h block_q8_0: f16 d, then 32 int8)", () => {
    it("are 34 bytes per 32 elements", () => {
        expect(Q8_0_BLOCK_BYTES).toBe(34);
        expect(ggmlTypeTraits[GgmlTensorType.Q8_0]).toMatchObject({ blockSize: 32, blockBytes: 34 });
        expect(tensorDataBytes(GgmlTensorType.Q8_0, 64)).toBe(68);
    });

    it("store d = max|x| / 127 first, little-endian, then each element's int8 in order", () => {
        const values = Float32Array.from({ length: 32 }, (_, j) => (j - 16) / 4); // −4 … 3.75
        const bytes = new Uint8Array(34);
        quantizeQ8_0(values, bytes);
        expect(bytes[0]! | (bytes[1]! << 8)).toBe(float32ToFloat16Bits(4 / 127));
        expect(Int8Array.from(bytes.subarray(2))[0]).toBe(-127); // −4 is the largest magnitude
        const d = Math.fround(4 / 127);
        const id = Math.fround(1 / d);
        Int8Array.from(bytes.subarray(2)).forEach((q, j) => {
            const scaled = Math.fround(values[j]! * id);
            // C's roundf: halves away from zero
            expect(q, `element ${j}`).toBe(Math.sign(scaled) * Math.floor(Math.abs(scaled) + 0.5));
        });
    });

    it("read back within half a step of every value, and exactly d·q", () => {
        const values = noise(32 * 8, 1, 3);
        const bytes = new Uint8Array(34 * 8);
        quantizeQ8_0(values, bytes);
        const back = new Float32Array(values.length);
        dequantizeQ8_0(bytes, back);
        for (let block = 0; block < 8; block++) {
            const d = halfAt(bytes, block * 34);
            for (let j = 0; j < 32; j++) {
                const q = ((bytes[block * 34 + 2 + j]! << 24) >> 24) as number;
                expect(back[block * 32 + j]).toBe(Math.fround(q * d));
                // d is rounded to f16 after the levels were chosen: allow its relative error too
                expect(Math.abs(back[block * 32 + j]! - values[block * 32 + j]!)).toBeLessThanOrEqual(d * 0.5 + 127 * d * 2 ** -11);
            }
        }
    });

    it("write an all-zero block as d = 0 and zeros", () => {
        const bytes = new Uint8Array(34).fill(0xaa);
        quantizeQ8_0(new Float32Array(32), bytes);
        expect([...bytes]).toEqual(new Array(34).fill(0));
    });
});

describe("Q4_0 blocks (block_q4_0: f16 d, then 16 bytes: element j low nibble, j + 16 high nibble)", () => {
    it("are 18 bytes per 32 elements", () => {
        expect(Q4_0_BLOCK_BYTES).toBe(18);
        expect(tensorDataBytes(GgmlTensorType.Q4_0, 96)).toBe(54);
    });

    it("map the value of largest magnitude to level 0 (−8) with d = max / −8, and pack the halves into nibbles", () => {
        // levels q in 0..15 chosen per element; x = d·(q − 8) with d = −0.5 (the max, 4, at level 0)
        const levels = Array.from({ length: 32 }, (_, j) => (j === 5 ? 0 : (j * 7 + 3) % 16));
        const values = Float32Array.from(levels, (q) => -0.5 * (q - 8));
        const bytes = new Uint8Array(18);
        quantizeQ4_0(values, bytes);
        expect(halfAt(bytes, 0)).toBe(-0.5);
        for (let j = 0; j < 16; j++) {
            expect(bytes[2 + j]! & 0x0f, `element ${j}`).toBe(levels[j]);
            expect(bytes[2 + j]! >>> 4, `element ${j + 16}`).toBe(levels[j + 16]);
        }
        const back = new Float32Array(32);
        dequantizeQ4_0(bytes, back);
        back.forEach((value, j) => expect(value, `element ${j}`).toBe(values[j]));
    });

    it("clamp −max, which would be level 16, to level 15", () => {
        const values = new Float32Array(32);
        values[0] = 2;
        values[1] = -2;
        const bytes = new Uint8Array(18);
        quantizeQ4_0(values, bytes);
        expect(halfAt(bytes, 0)).toBe(-0.25);
        expect(bytes[2]! & 0x0f).toBe(0);
        expect(bytes[3]! & 0x0f).toBe(15);
    });

    it("read back within half a step (one step at the clamped top) of every value", () => {
        const values = noise(32 * 16, 2, 2);
        const bytes = new Uint8Array(18 * 16);
        quantizeQ4_0(values, bytes);
        const back = new Float32Array(values.length);
        dequantizeQ4_0(bytes, back);
        for (let block = 0; block < 16; block++) {
            const step = Math.abs(halfAt(bytes, block * 18));
            for (let j = 0; j < 32; j++) {
                expect(Math.abs(back[block * 32 + j]! - values[block * 32 + j]!)).toBeLessThanOrEqual(step * 1.01);
            }
        }
    });
});
