import { xxh64 } from "@node-rs/xxhash";

/**
 * The geometry of one sequence's KV as llama.cpp writes it (docs/STATE-FORMAT.md),
 * measured from a real state of the target context, never assumed.
 */
export interface KvLayerLayout {
    /** ggml type of K and V (F16 = 1, Q8_0 = 8, ...). */
    readonly kType: number;
    readonly vType: number;
    /** Bytes of one position's K row. */
    readonly kRowBytes: number;
    /** Bytes of one position's V: a row, or, when V is transposed, `vElementBytes × numVElements`. */
    readonly vRowBytes: number;
    /** Only when V is transposed: bytes per element and elements per position. */
    readonly vElementBytes: number;
    readonly numVElements: number;
}

export interface KvLayout {
    readonly vTransposed: boolean;
    readonly layers: readonly KvLayerLayout[];
}

/**
 * Bytes one token position occupies in a page: K and V of every layer.
 *
 * Inside a page of `pageTokens` positions the bytes are laid out in the order llama.cpp writes a
 * state (docs/STATE-FORMAT.md): every layer's K block `[pageTokens × kRowBytes]`, layer after layer,
 * then every layer's V block: `[pageTokens × vRowBytes]`, or, when V is transposed, `numVElements`
 * runs of `[pageTokens × vElementBytes]`. Every block keeps llama.cpp's own order, so a page is
 * filled and read with one copy per block, and a state saved into the pages writes each page from
 * its first byte to its last, which lets the save hash a page as it writes it.
 */
export function bytesPerToken(layout: KvLayout): number {
    return layout.layers.reduce((sum, layer) => sum + layer.kRowBytes + layer.vRowBytes, 0);
}

/** Where each layer's K block and V block start inside a page of `pageTokens` positions. */
export interface BlockOffsets {
    readonly k: readonly number[];
    readonly v: readonly number[];
}

/** The offsets of every layer's K and V blocks inside a page (see `bytesPerToken`). */
export function blockOffsetsInPage(layout: KvLayout, pageTokens: number): BlockOffsets {
    const k: number[] = [];
    const v: number[] = [];
    let offset = 0;
    for (const layer of layout.layers) {
        k.push(offset);
        offset += pageTokens * layer.kRowBytes;
    }
    for (const layer of layout.layers) {
        v.push(offset);
        offset += pageTokens * layer.vRowBytes;
    }
    return { k, v };
}

/** The first difference between two layouts, in words, or undefined when they are the same. */
export function describeLayoutMismatch(expected: KvLayout, actual: KvLayout): string | undefined {
    if (expected.layers.length !== actual.layers.length) {
        return `${actual.layers.length} layers, the context has ${expected.layers.length}`;
    }
    if (expected.vTransposed !== actual.vTransposed) {
        return `V ${actual.vTransposed ? "transposed" : "in rows"}, the context keeps it ${expected.vTransposed ? "transposed" : "in rows"}`;
    }
    for (let i = 0; i < expected.layers.length; i++) {
        const want = expected.layers[i]!;
        const got = actual.layers[i]!;
        for (const field of ["kType", "vType", "kRowBytes", "vRowBytes", "vElementBytes", "numVElements"] as const) {
            if (want[field] !== got[field]) {
                return `layer ${i} has ${field} ${got[field]}, the context has ${want[field]}`;
            }
        }
    }
    return undefined;
}

/** A short stable hash of the layout and the model fingerprint: what a page manifest carries. */
export function layoutFingerprint(layout: KvLayout, modelFingerprint: string): string {
    const description = JSON.stringify({ model: modelFingerprint, vTransposed: layout.vTransposed, layers: layout.layers });
    return xxh64(Buffer.from(description)).toString(16).padStart(16, "0");
}
