import { float16BitsToFloat32, float32ToFloat16Bits } from "./float16.js";
import { GgmlTensorType } from "../../engine/gguf/ggufTypes.js";
import { dequantizeQ4_0, dequantizeQ8_0, quantizeQ4_0, quantizeQ8_0 } from "./quantizeBlocks.js";
import { dequantizeQ4_K, quantizeQ4_K } from "./quantizeQ4K.js";

/**
 * `values` as `type`'s bytes, into `out` (exactly `tensorDataBytes(type, values.length)` long).
 * `values` is a whole number of the type's blocks, taken along a row.
 */
export function encodeTensorValues(type: GgmlTensorType, values: Float32Array, out: Uint8Array): void {
    switch (type) {
        case GgmlTensorType.F32:
            out.set(new Uint8Array(values.buffer, values.byteOffset, values.length * 4));
            return;
        case GgmlTensorType.F16: {
            for (let i = 0; i < values.length; i++) {
                const bits = float32ToFloat16Bits(values[i]!);
                out[2 * i] = bits & 0xff;
                out[2 * i + 1] = bits >>> 8;
            }
            return;
        }
        case GgmlTensorType.Q8_0:
            quantizeQ8_0(values, out);
            return;
        case GgmlTensorType.Q4_0:
            quantizeQ4_0(values, out);
            return;
        case GgmlTensorType.Q4_K:
            quantizeQ4_K(values, out);
            return;
    }
}

/** The values `bytes` of `type` stand for, as ggml's dequantisation (to_float) reads them, into `out`. */
export function decodeTensorValues(type: GgmlTensorType, bytes: Uint8Array, out: Float32Array): void {
    switch (type) {
        case GgmlTensorType.F32:
            new Uint8Array(out.buffer, out.byteOffset, out.length * 4).set(bytes.subarray(0, out.length * 4));
            return;
        case GgmlTensorType.F16:
            for (let i = 0; i < out.length; i++) {
                out[i] = float16BitsToFloat32(bytes[2 * i]! | (bytes[2 * i + 1]! << 8));
            }
            return;
        case GgmlTensorType.Q8_0:
            dequantizeQ8_0(bytes, out);
            return;
        case GgmlTensorType.Q4_0:
            dequantizeQ4_0(bytes, out);
            return;
        case GgmlTensorType.Q4_K:
            dequantizeQ4_K(bytes, out);
            return;
    }
}
