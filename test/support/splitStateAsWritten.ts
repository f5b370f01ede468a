import { parseSequenceState } from "../../engine/codec/parseSequenceState.js";
import type { StateTarget } from "../../engine/codec/statePages.js";
import { pageChecksum } from "../../engine/pages/pageChecksum.js";

/**
 * A whole state split as llama.cpp's writes split it when it saves straight into pages
 * (`KvaultSplitWriter` in the addon patch): what it writes with write(), the bytes outside the KV
 * rows, and what it writes with write_tensor(), the KV rows, every layer's K then every layer's V.
 */
export function splitStateAsWritten(state: Buffer): { meta: Buffer; kv: Buffer } {
    const parsed = parseSequenceState(state);
    const kvParts = [...parsed.layers.map((layer) => layer.k), ...parsed.layers.map((layer) => layer.v)];
    const metaParts: Buffer[] = [];
    let offset = 0;
    for (const part of kvParts) {
        const start = part.byteOffset - state.byteOffset;
        metaParts.push(state.subarray(offset, start));
        offset = start + part.length;
    }
    metaParts.push(state.subarray(offset));
    return { meta: Buffer.concat(metaParts), kv: Buffer.concat(kvParts) };
}

/**
 * What the addon's writer does with a target, for a state already whole: false, nothing written,
 * when the state is not the size planned; else its metadata into `target.meta` and its KV rows
 * into the runs, in order, and, where the target asks, each page's checksum once written.
 */
export function writeStateInto(target: StateTarget, state: Buffer): boolean {
    if (state.length !== target.numBytes) {
        return false;
    }
    const { meta, kv } = splitStateAsWritten(state);
    if (meta.length !== target.meta.length) {
        throw new Error(`the state's metadata is ${meta.length} bytes, the target's ${target.meta.length}`);
    }
    meta.copy(target.meta);
    let offset = 0;
    for (const run of target.runs) {
        run.set(kv.subarray(offset, offset + run.length));
        offset += run.length;
    }
    if (offset !== kv.length) {
        throw new Error(`the runs hold ${offset} of the state's ${kv.length} KV bytes`);
    }
    target.pageHashes?.pages.forEach((page, index) => {
        target.pageHashes!.checksums[index] = pageChecksum(page, Number(target.pageHashes!.seeds[index]));
    });
    return true;
}
