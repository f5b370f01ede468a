// ggml's Q8_0 and Q4_0 blocks, written and read as ggml-quants.c does (quantize_row_q8_0_ref,
// quantize_row_q4_0_ref, dequantize_row_q8_0, dequantize_row_q4_0), with the block layouts of
// ggml-common.h. The arithmetic is float32, as in C: every step goes through Math.fround.
import { float16BitsToFloat32, float32ToFloat16Bits } from "./float16.js";

const f32 = Math.fround;

export const Q8_0_BLOCK = 32;
/** block_q8_0: `d` (f16), then 32 × int8 `qs`; x = d · q. */
export const Q8_0_BLOCK_BYTES = 2 + Q8_0_BLOCK;
export const Q4_0_BLOCK = 32;
/** block_q4_0: `d` (f16), then 16 bytes `qs`: element j in the low nibble of qs[j], element j + 16 in its high nibble; x = d · (q − 8). */
export const Q4_0_BLOCK_BYTES = 2 + Q4_0_BLOCK / 2;

/** C's roundf: halves away from zero (Math.round takes −2.5 to −2). */
function roundHalfAway(value: number): number {
    return value < 0 ? -Math.floor(-value + 0.5) : Math.floor(value + 0.5);
}

export function writeHalf(out: Uint8Array, at: number, value: number): void {
    const bits = float32ToFloat16Bits(value);
    out[at] = bits & 0xff;
    out[at + 1] = bits >>> 8;
}

export function readHalf(bytes: Uint8Array, at: number): number {
    return float16BitsToFloat32(bytes[at]! | (bytes[at + 1]! << 8));
}

/** Quantizes `values` (a whole number of 32-element blocks) into `out`, `Q8_0_BLOCK_BYTES` per block. */
export function quantizeQ8_0(values: Float32Array, out: Uint8Array): void {
    for (let block = 0; block * Q8_0_BLOCK < values.length; block++) {
        const x = block * Q8_0_BLOCK;
        const y = block * Q8_0_BLOCK_BYTES;
        let amax = 0;
        for (let j = 0; j < Q8_0_BLOCK; j++) {
            amax = Math.max(amax, Math.abs(values[x + j]!));
        }
        const d = f32(amax / 127);
        const id = d !== 0 ? f32(1 / d) : 0;
        writeHalf(out, y, d);
        for (let j = 0; j < Q8_0_BLOCK; j++) {
            out[y + 2 + j] = roundHalfAway(f32(values[x + j]! * id)) & 0xff; // int8, two's complement
        }
    }
}

export function dequantizeQ8_0(bytes: Uint8Array, out: Float32Array): void {
    for (let block = 0; block * Q8_0_BLOCK < out.length; block++) {
        const x = block * Q8_0_BLOCK_BYTES;
        const d = readHalf(bytes, x);
        for (let j = 0; j < Q8_0_BLOCK; j++) {
            const q = (bytes[x + 2 + j]! << 24) >> 24; // sign-extend the int8
            out[block * Q8_0_BLOCK + j] = q * d;
        }
    }
}

/** Quantizes `values` (a whole number of 32-element blocks) into `out`, `Q4_0_BLOCK_BYTES` per block. */
export function quantizeQ4_0(values: Float32Array, out: Uint8Array): void {
    const half = Q4_0_BLOCK / 2;
    for (let block = 0; block * Q4_0_BLOCK < values.length; block++) {
        const x = block * Q4_0_BLOCK;
        const y = block * Q4_0_BLOCK_BYTES;
        // the value of largest magnitude, with its sign: it maps to −8, the one level with no mirror
        let amax = 0;
        let max = 0;
        for (let j = 0; j < Q4_0_BLOCK; j++) {
            const v = values[x + j]!;
            if (amax < Math.abs(v)) {
                amax = Math.abs(v);
                max = v;
            }
        }
        const d = f32(max / -8);
        const id = d !== 0 ? f32(1 / d) : 0;
        writeHalf(out, y, d);
        for (let j = 0; j < half; j++) {
            // (int8_t)(x·id + 8.5): truncation toward zero of a value in [0.5, 16.5]
            const low = Math.min(15, Math.trunc(f32(f32(values[x + j]! * id) + 8.5)));
            const high = Math.min(15, Math.trunc(f32(f32(values[x + half + j]! * id) + 8.5)));
            out[y + 2 + j] = low | (high << 4);
        }
    }
}

export function dequantizeQ4_0(bytes: Uint8Array, out: Float32Array): void {
    const half = Q4_0_BLOCK / 2;
    for (let block = 0; block * Q4_0_BLOCK < out.length; block++) {
        const x = block * Q4_0_BLOCK_BYTES;
        const d = readHalf(bytes, x);
        for (let j = 0; j < half; j++) {
            const q = bytes[x + 2 + j]!;
            out[block * Q4_0_BLOCK + j] = ((q & 0x0f) - 8) * d;
            out[block * Q4_0_BLOCK + half + j] = ((q >>> 4) - 8) * d;
        }
    }
}
