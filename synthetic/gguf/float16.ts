// IEEE 754 binary32 → binary16 with round-to-nearest-even, as ggml's GGML_FP32_TO_FP16 does.
// Node 20 has no Float16Array, so the conversion is done on the bits.

const scratchFloat = new Float32Array(1);
const scratchBits = new Uint32Array(scratchFloat.buffer);

export function float32ToFloat16Bits(value: number): number {
    scratchFloat[0] = value;
    const bits = scratchBits[0]!;
    const sign = (bits >>> 16) & 0x8000;
    const exponent = (bits >>> 23) & 0xff;
    const mantissa = bits & 0x7fffff;

    if (exponent === 0xff) {
        // Inf or NaN; keep NaN a quiet NaN
        return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
    }

    const halfExponent = exponent - 127 + 15;
    if (halfExponent >= 0x1f) {
        // too large: infinity
        return sign | 0x7c00;
    }

    if (halfExponent <= 0) {
        // subnormal half, or zero
        if (halfExponent < -10) {
            return sign;
        }
        const fullMantissa = mantissa | 0x800000;
        const shift = 14 - halfExponent;
        const halfMantissa = fullMantissa >>> shift;
        const remainder = fullMantissa & ((1 << shift) - 1);
        const halfway = 1 << (shift - 1);
        const roundUp = remainder > halfway || (remainder === halfway && (halfMantissa & 1) === 1);
        return sign | (halfMantissa + (roundUp ? 1 : 0));
    }

    const halfMantissa = mantissa >>> 13;
    const remainder = mantissa & 0x1fff;
    const roundUp = remainder > 0x1000 || (remainder === 0x1000 && (halfMantissa & 1) === 1);
    // A carry out of the mantissa correctly bumps the exponent (and may reach infinity).
    return (sign | (halfExponent << 10) | halfMantissa) + (roundUp ? 1 : 0);
}

export function float16BitsToFloat32(half: number): number {
    const sign = half & 0x8000 ? -1 : 1;
    const exponent = (half >>> 10) & 0x1f;
    const mantissa = half & 0x3ff;
    if (exponent === 0) {
        return sign * mantissa * 2 ** -24;
    }
    if (exponent === 0x1f) {
        return mantissa === 0 ? sign * Infinity : NaN;
    }
    return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}
