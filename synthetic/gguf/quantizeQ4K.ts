// ggml's Q4_K super-blocks, written and read as ggml-quants.c does (quantize_row_q4_K_ref with
// make_qkx2_quants, dequantize_row_q4_K, get_scale_min_k4), in float32 arithmetic.
import { readHalf, writeHalf } from "./quantizeBlocks.js";

const f32 = Math.fround;

/** QK_K: elements per super-block. */
export const Q4_K_BLOCK = 256;
/**
 * block_q4_K: `d` and `dmin` (f16), `scales[12]` (eight 6-bit scales and eight 6-bit mins, packed
 * as get_scale_min_k4 reads them), `qs[128]`: each 64-element group is 32 bytes, its first 32
 * elements in the low nibbles and the next 32 in the high nibbles. x = d·sc·q − dmin·m.
 */
export const Q4_K_BLOCK_BYTES = 2 + 2 + 12 + Q4_K_BLOCK / 2;
const SUB_BLOCK = 32;
const NUM_SUB_BLOCKS = Q4_K_BLOCK / SUB_BLOCK;

/** ggml's nearest_int: round half to even, through float32's 2^23 trick. */
function nearestInt(value: number): number {
    return f32(value + 12582912) - 12582912;
}

/**
 * make_qkx2_quants(n = 32, nmax = 15, rmin = −1, rdelta = 0.1, nstep = 20, use_mad = false): the
 * scale and min of one sub-block that minimise the weighted squared error; levels go to `levels`.
 */
function fitSubBlock(x: Float32Array, weights: Float32Array, levels: Uint8Array): { scale: number; min: number } {
    const n = SUB_BLOCK;
    const nmax = 15;
    let min = x[0]!;
    let max = x[0]!;
    let sumW = weights[0]!;
    let sumX = f32(sumW * x[0]!);
    for (let i = 1; i < n; i++) {
        min = Math.min(min, x[i]!);
        max = Math.max(max, x[i]!);
        sumW = f32(sumW + weights[i]!);
        sumX = f32(sumX + f32(weights[i]! * x[i]!));
    }
    if (min > 0) {
        min = 0;
    }
    if (max === min) {
        levels.fill(0);
        return { scale: 0, min: -min };
    }
    let iscale = f32(nmax / f32(max - min));
    let scale = f32(1 / iscale);
    let bestError = 0;
    for (let i = 0; i < n; i++) {
        const level = Math.max(0, Math.min(nmax, nearestInt(f32(iscale * f32(x[i]! - min)))));
        levels[i] = level;
        const diff = f32(f32(f32(scale * level) + min) - x[i]!);
        bestError = f32(bestError + f32(weights[i]! * f32(diff * diff)));
    }
    const trial = new Uint8Array(n);
    for (let step = 0; step <= 20; step++) {
        iscale = f32(f32(f32(-1 + f32(0.1 * step)) + nmax) / f32(max - min));
        let sumL = 0;
        let sumL2 = 0;
        let sumXL = 0;
        for (let i = 0; i < n; i++) {
            const level = Math.max(0, Math.min(nmax, nearestInt(f32(iscale * f32(x[i]! - min)))));
            trial[i] = level;
            const w = weights[i]!;
            sumL = f32(sumL + f32(w * level));
            sumL2 = f32(sumL2 + f32(f32(w * level) * level));
            sumXL = f32(sumXL + f32(f32(w * level) * x[i]!));
        }
        const det = f32(f32(sumW * sumL2) - f32(sumL * sumL));
        if (det > 0) {
            let thisScale = f32(f32(f32(sumW * sumXL) - f32(sumX * sumL)) / det);
            let thisMin = f32(f32(f32(sumL2 * sumX) - f32(sumL * sumXL)) / det);
            if (thisMin > 0) {
                thisMin = 0;
                thisScale = f32(sumXL / sumL2);
            }
            let error = 0;
            for (let i = 0; i < n; i++) {
                const diff = f32(f32(f32(thisScale * trial[i]!) + thisMin) - x[i]!);
                error = f32(error + f32(weights[i]! * f32(diff * diff)));
            }
            if (error < bestError) {
                levels.set(trial);
                bestError = error;
                scale = thisScale;
                min = thisMin;
            }
        }
    }
    return { scale, min: -min };
}

/** get_scale_min_k4: sub-block `j`'s 6-bit scale and min from the 12 packed bytes at `at`. */
function scaleAndMin(bytes: Uint8Array, at: number, j: number): { sc: number; m: number } {
    if (j < 4) {
        return { sc: bytes[at + j]! & 63, m: bytes[at + j + 4]! & 63 };
    }
    return {
        sc: (bytes[at + j + 4]! & 0x0f) | ((bytes[at + j - 4]! >>> 6) << 4),
        m: (bytes[at + j + 4]! >>> 4) | ((bytes[at + j]! >>> 6) << 4)
    };
}

/** Quantizes `values` (a whole number of 256-element super-blocks) into `out`, `Q4_K_BLOCK_BYTES` per block. */
export function quantizeQ4_K(values: Float32Array, out: Uint8Array): void {
    const levels = new Uint8Array(Q4_K_BLOCK);
    const weights = new Float32Array(SUB_BLOCK);
    const scales = new Float32Array(NUM_SUB_BLOCKS);
    const mins = new Float32Array(NUM_SUB_BLOCKS);
    for (let block = 0; block * Q4_K_BLOCK < values.length; block++) {
        const x = values.subarray(block * Q4_K_BLOCK, (block + 1) * Q4_K_BLOCK);
        const y = block * Q4_K_BLOCK_BYTES;
        out.fill(0, y, y + Q4_K_BLOCK_BYTES);
        let maxScale = 0;
        let maxMin = 0;
        for (let j = 0; j < NUM_SUB_BLOCKS; j++) {
            const sub = x.subarray(j * SUB_BLOCK, (j + 1) * SUB_BLOCK);
            let sumX2 = 0;
            for (let l = 0; l < SUB_BLOCK; l++) {
                sumX2 = f32(sumX2 + f32(sub[l]! * sub[l]!));
            }
            const avX = f32(Math.sqrt(f32(sumX2 / SUB_BLOCK)));
            for (let l = 0; l < SUB_BLOCK; l++) {
                weights[l] = f32(avX + Math.abs(sub[l]!));
            }
            const fit = fitSubBlock(sub, weights, levels.subarray(j * SUB_BLOCK, (j + 1) * SUB_BLOCK));
            scales[j] = fit.scale;
            mins[j] = fit.min;
            maxScale = Math.max(maxScale, fit.scale);
            maxMin = Math.max(maxMin, fit.min);
        }

        const invScale = maxScale > 0 ? f32(63 / maxScale) : 0;
        const invMin = maxMin > 0 ? f32(63 / maxMin) : 0;
        const packed = y + 4;
        for (let j = 0; j < NUM_SUB_BLOCKS; j++) {
            const ls = Math.min(63, nearestInt(f32(invScale * scales[j]!)) & 0xff);
            const lm = Math.min(63, nearestInt(f32(invMin * mins[j]!)) & 0xff);
            if (j < 4) {
                out[packed + j] = ls;
                out[packed + j + 4] = lm;
            } else {
                out[packed + j + 4] = (ls & 0x0f) | ((lm & 0x0f) << 4);
                out[packed + j - 4] = out[packed + j - 4]! | ((ls >>> 4) << 6);
                out[packed + j] = out[packed + j]! | ((lm >>> 4) << 6);
            }
        }
        writeHalf(out, y, f32(maxScale / 63));
        writeHalf(out, y + 2, f32(maxMin / 63));

        // the levels again, against the scales and mins as stored
        const d = readHalf(out, y);
        const dmin = readHalf(out, y + 2);
        for (let j = 0; j < NUM_SUB_BLOCKS; j++) {
            const { sc, m } = scaleAndMin(out, packed, j);
            const scale = f32(d * sc);
            if (scale === 0) {
                continue;
            }
            const offset = f32(dmin * m);
            for (let i = 0; i < SUB_BLOCK; i++) {
                const level = nearestInt(f32(f32(x[j * SUB_BLOCK + i]! + offset) / scale));
                levels[j * SUB_BLOCK + i] = Math.max(0, Math.min(15, level));
            }
        }

        const qs = y + 16;
        for (let group = 0; group < Q4_K_BLOCK / 64; group++) {
            for (let l = 0; l < 32; l++) {
                out[qs + group * 32 + l] = levels[group * 64 + l]! | (levels[group * 64 + 32 + l]! << 4);
            }
        }
    }
}

export function dequantizeQ4_K(bytes: Uint8Array, out: Float32Array): void {
    for (let block = 0; block * Q4_K_BLOCK < out.length; block++) {
        const x = block * Q4_K_BLOCK_BYTES;
        const d = readHalf(bytes, x);
        const dmin = readHalf(bytes, x + 2);
        let y = block * Q4_K_BLOCK;
        for (let group = 0; group < Q4_K_BLOCK / 64; group++) {
            const first = scaleAndMin(bytes, x + 4, 2 * group);
            const second = scaleAndMin(bytes, x + 4, 2 * group + 1);
            const d1 = f32(d * first.sc);
            const m1 = f32(dmin * first.m);
            const d2 = f32(d * second.sc);
            const m2 = f32(dmin * second.m);
            const qs = x + 16 + group * 32;
            for (let l = 0; l < 32; l++) {
                out[y++] = f32(d1 * (bytes[qs + l]! & 0x0f)) - m1;
            }
            for (let l = 0; l < 32; l++) {
                out[y++] = f32(d2 * (bytes[qs + l]! >>> 4)) - m2;
            }
        }
    }
}
