import { xxh64 } from "@node-rs/xxhash";
import { blockOffsetsInPage, type KvLayout } from "../codec/KvLayout.js";
import type { ParsedSequenceState } from "../codec/parseSequenceState.js";

/**
 * A token position's KV fingerprint: xxh64 of its K rows of every layer, concatenated. From the
 * second layer on, a K row depends on every token before it, so two positions share a fingerprint
 * only when their sequences agree up to there: a copy of another workspace's KV shows up as its
 * fingerprints, and nothing else does. K alone, because K is in rows in every layout (V may be
 * transposed). Undefined for a position whose rows are all zero (a scrubbed, unwritten slot).
 */
export type KvFingerprint = bigint;

/** One fingerprint per position of a parsed state, `[0, tokens.length)`. */
export function stateFingerprints(state: ParsedSequenceState): (KvFingerprint | undefined)[] {
    const rowBytes = state.layout.layers.map((layer) => layer.kRowBytes);
    const joined = Buffer.alloc(rowBytes.reduce((sum, bytes) => sum + bytes, 0));
    const zero = Buffer.alloc(joined.length);
    const fingerprints: (KvFingerprint | undefined)[] = [];
    for (let position = 0; position < state.tokens.length; position++) {
        let offset = 0;
        state.layers.forEach((layer, index) => {
            const bytes = rowBytes[index]!;
            layer.k.copy(joined, offset, position * bytes, (position + 1) * bytes);
            offset += bytes;
        });
        fingerprints.push(fingerprintOf(joined, zero));
    }
    return fingerprints;
}

/**
 * One fingerprint per token slot of a page's raw bytes, `[0, pageTokens)`, past its owner's
 * written length too: that is where a page that was not zeroed keeps its previous owner's rows.
 */
export function pageFingerprints(raw: Uint8Array, layout: KvLayout, pageTokens: number): (KvFingerprint | undefined)[] {
    const bytes = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    const joined = Buffer.alloc(layout.layers.reduce((sum, layer) => sum + layer.kRowBytes, 0));
    const zero = Buffer.alloc(joined.length);
    const starts = blockOffsetsInPage(layout, pageTokens).k;
    const fingerprints: (KvFingerprint | undefined)[] = [];
    for (let slot = 0; slot < pageTokens; slot++) {
        let offset = 0;
        layout.layers.forEach((layer, index) => {
            const start = starts[index]! + slot * layer.kRowBytes;
            bytes.copy(joined, offset, start, start + layer.kRowBytes);
            offset += layer.kRowBytes;
        });
        fingerprints.push(fingerprintOf(joined, zero));
    }
    return fingerprints;
}

function fingerprintOf(joined: Buffer, zero: Buffer): KvFingerprint | undefined {
    return joined.equals(zero) ? undefined : xxh64(joined);
}
