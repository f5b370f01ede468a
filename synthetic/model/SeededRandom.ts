/**
 * xoshiro128** seeded through splitmix32: fast, 32-bit only, and the same stream on every
 * platform, so a preset's weights are the same bytes everywhere.
 */
export class SeededRandom {
    private a: number;
    private b: number;
    private c: number;
    private d: number;

    constructor(seed: number) {
        let state = seed >>> 0;
        const next = (): number => {
            state = (state + 0x9e3779b9) >>> 0;
            let z = state;
            z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
            z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
            return (z ^ (z >>> 16)) >>> 0;
        };
        this.a = next();
        this.b = next();
        this.c = next();
        this.d = next();
    }

    /** A uniformly distributed u32. */
    nextU32(): number {
        const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
        const t = this.b << 9;
        this.c ^= this.a;
        this.d ^= this.b;
        this.b ^= this.c;
        this.a ^= this.d;
        this.c ^= t;
        this.d = rotl(this.d, 11);
        return result;
    }

    /** Uniform in `[-bound, bound)`. */
    nextSymmetric(bound: number): number {
        return ((this.nextU32() / 0x1_0000_0000) * 2 - 1) * bound;
    }
}

function rotl(x: number, k: number): number {
    return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** FNV-1a over a string's UTF-16 code units: a stable per-tensor seed. */
export function hashString(text: string): number {
    let hash = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) {
        hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
    }
    return hash;
}
