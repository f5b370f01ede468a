import { invariant } from "../core/invariant.js";
import { StateLayoutMismatchError } from "./codecErrors.js";
import { blockOffsetsInPage, bytesPerToken, describeLayoutMismatch, type KvLayout } from "./KvLayout.js";
import { STATE_SEQ_MAGIC, STATE_SEQ_VERSION, type ParsedSequenceState } from "./parseSequenceState.js";

/**
 * Bytes of a one-sequence state file of `numTokens` positions, as llama.cpp writes it and the
 * codec assembles it: the header and tokens, the stream count and each stream's cell count, 12
 * bytes of metadata per cell, the V layout and layer count, 24 bytes of type and row size per
 * layer (K and V), then the rows.
 */
export function sequenceStateBytes(numTokens: number, layout: KvLayout, numStreams: number): number {
    return 12 + 4 * numTokens + 4 + 4 * numStreams + 12 * numTokens + 8 + layout.layers.length * 24 + numTokens * bytesPerToken(layout);
}

/** Pages needed for `numTokens` positions: ⌈numTokens / pageTokens⌉. */
export function numPagesFor(numTokens: number, pageTokens: number): number {
    return Math.ceil(numTokens / pageTokens);
}

/** The part of a state one scatter covers: the layers `[firstLayer, endLayer)` of the pages `[firstPage, endPage)`. */
export interface ScatterRange {
    readonly firstLayer: number;
    readonly endLayer: number;
    readonly firstPage: number;
    readonly endPage: number;
}

/**
 * Runs `copy(pageIndex, pageOffset, stateOffset, numBytes)` for every contiguous block that moves
 * between a state's layer-major data and the pages' layout (see `bytesPerToken`), for the layers
 * and pages of `range` (by default all). Positions `[0, numTokens)` only: nothing past the owner's
 * valid length is ever read or written.
 */
function forEachBlock(
    layout: KvLayout,
    numTokens: number,
    pageTokens: number,
    copy: (pageIndex: number, pageOffset: number, layer: number, part: "k" | "v", stateOffset: number, numBytes: number) => void,
    range: ScatterRange = { firstLayer: 0, endLayer: layout.layers.length, firstPage: 0, endPage: numPagesFor(numTokens, pageTokens) }
): void {
    const { firstLayer, endLayer, firstPage, endPage } = range;
    const offsets = blockOffsetsInPage(layout, pageTokens);
    for (let layerIndex = firstLayer; layerIndex < endLayer; layerIndex++) {
        const layer = layout.layers[layerIndex]!;
        const kOffset = offsets.k[layerIndex]!;
        const vOffset = offsets.v[layerIndex]!;
        for (let page = firstPage; page < endPage; page++) {
            const first = page * pageTokens;
            const count = Math.min(pageTokens, numTokens - first);
            copy(page, kOffset, layerIndex, "k", first * layer.kRowBytes, count * layer.kRowBytes);
            if (!layout.vTransposed) {
                copy(page, vOffset, layerIndex, "v", first * layer.vRowBytes, count * layer.vRowBytes);
            } else {
                const run = pageTokens * layer.vElementBytes;
                for (let element = 0; element < layer.numVElements; element++) {
                    copy(
                        page,
                        vOffset + element * run,
                        layerIndex,
                        "v",
                        (element * numTokens + first) * layer.vElementBytes,
                        count * layer.vElementBytes
                    );
                }
            }
        }
    }
}

/** How the codec reaches page bytes: through the pool's leases in the engine, plain buffers in tests. */
export interface PageBlockAccess {
    /** Pages available, in token order. */
    readonly numPages: number;
    write(pageIndex: number, pageOffset: number, bytes: Uint8Array): void;
    /** A copy of the bytes. */
    read(pageIndex: number, pageOffset: number, numBytes: number): Uint8Array;
    /**
     * The bytes themselves, no copy: valid only while the caller holds the pages (its read
     * leases), and never kept past that, since a page's next owner writes the same memory.
     */
    view(pageIndex: number, pageOffset: number, numBytes: number): Uint8Array;
}

/** Page access over plain buffers, each `pageTokens × bytesPerToken` bytes. */
export function bufferPageAccess(pages: readonly Buffer[]): PageBlockAccess {
    return {
        numPages: pages.length,
        write: (pageIndex, pageOffset, bytes) => {
            pages[pageIndex]!.set(bytes, pageOffset);
        },
        read: (pageIndex, pageOffset, numBytes) => new Uint8Array(pages[pageIndex]!.subarray(pageOffset, pageOffset + numBytes)),
        view: (pageIndex, pageOffset, numBytes) => pages[pageIndex]!.subarray(pageOffset, pageOffset + numBytes)
    };
}

/** Copies a parsed state's KV into pages (zeroed, `pageTokens × bytesPerToken(layout)` bytes each). */
export function scatterStateToPages(state: ParsedSequenceState, pages: PageBlockAccess, pageTokens: number): void {
    scatterRangeToPages(state, pages, pageTokens, {
        firstLayer: 0,
        endLayer: state.layout.layers.length,
        firstPage: 0,
        endPage: pages.numPages
    });
}

/** `scatterStateToPages` for a part of the state only: a long scatter done a page and a layer at a time. */
export function scatterRangeToPages(state: ParsedSequenceState, pages: PageBlockAccess, pageTokens: number, range: ScatterRange): void {
    const { firstLayer, endLayer, firstPage, endPage } = range;
    invariant(
        pages.numPages === numPagesFor(state.numCells, pageTokens),
        () =>
            `scatter of ${state.numCells} tokens at ${pageTokens} per page needs ${numPagesFor(state.numCells, pageTokens)} pages, got ${pages.numPages}`
    );
    invariant(
        Number.isSafeInteger(firstLayer) && firstLayer >= 0 && endLayer >= firstLayer && endLayer <= state.layout.layers.length,
        () => `scatter of layers [${firstLayer}, ${endLayer}) of a state with ${state.layout.layers.length}`
    );
    invariant(
        Number.isSafeInteger(firstPage) && firstPage >= 0 && endPage >= firstPage && endPage <= pages.numPages,
        () => `scatter of pages [${firstPage}, ${endPage}) of a state in ${pages.numPages}`
    );
    forEachBlock(
        state.layout,
        state.numCells,
        pageTokens,
        (page, pageOffset, layer, part, stateOffset, numBytes) => {
            pages.write(page, pageOffset, state.layers[layer]![part].subarray(stateOffset, stateOffset + numBytes));
        },
        range
    );
}

/**
 * Where llama.cpp saves a state straight into pages (`saveSequenceStateToChunks` in the addon
 * patch): every byte but the KV rows into `meta`, in order; the KV rows, in the order llama.cpp
 * writes them (every layer's K, then every layer's V), into `runs`, views of the pages' blocks
 * (see `bytesPerToken`). Planned from the token count, the layout and the stream count: the
 * metadata the save writes says whether the plan held (`parseSequenceStateMeta`).
 */
export interface StateTarget {
    readonly numTokens: number;
    readonly meta: Buffer;
    readonly runs: readonly Uint8Array[];
    /** The page (its index in token order) each run lies in. */
    readonly runPages: Uint32Array;
    /** The state's size: `meta`'s and the runs' together. */
    readonly numBytes: number;
    /** Bytes each page holds once the runs are written, from its start: its valid length. */
    readonly numValidBytesByPage: readonly number[];
    /**
     * When given, the save hashes each page as it writes it, and must fill `checksums` (see
     * `PageHashes`). A page's runs come in the order of its bytes (`bytesPerToken`), so the hash
     * reads each byte as it is written, instead of a second pass over every page afterwards.
     */
    readonly pageHashes?: PageHashes;
}

/** What a save that hashes the pages it writes is given, page by page in token order. */
export interface PageHashes {
    /** Each page's valid bytes, `[0, numValidBytesByPage[i])`: the bytes its checksum covers. */
    readonly pages: readonly Uint8Array[];
    /** Each checksum's seed: the page's first token position (`pageChecksum`). */
    readonly seeds: BigUint64Array;
    /** Filled by the save: each page's `pageChecksum` of its valid bytes once written. */
    readonly checksums: BigUint64Array;
}

/**
 * Plans where a state of `numTokens` positions, saved by a context with `numStreams` streams, goes
 * in pages of `pageTokens` positions; `target(pageIndex, pageOffset, numBytes)` gives the page's
 * bytes to write (`PageWriteLease.target`). Every KV byte has exactly one place, checked.
 */
export function planStateTarget(
    numTokens: number,
    layout: KvLayout,
    numStreams: number,
    pageTokens: number,
    target: (pageIndex: number, pageOffset: number, numBytes: number) => Uint8Array
): StateTarget {
    invariant(Number.isSafeInteger(numTokens) && numTokens > 0, () => `a state target for ${numTokens} tokens`);
    invariant(Number.isInteger(numStreams) && numStreams >= 1, () => `a state target for ${numStreams} streams`);
    const numKvBytes = numTokens * bytesPerToken(layout);
    const numBytes = sequenceStateBytes(numTokens, layout, numStreams);
    // The KV section as llama.cpp writes it, layer after layer of K, then of V: laid out as one
    // page of all the state's positions would be
    const { k: kStarts, v: vStarts } = blockOffsetsInPage(layout, numTokens);
    const numValidBytesByPage = new Array<number>(numPagesFor(numTokens, pageTokens)).fill(0);
    const runs: { at: number; bytes: Uint8Array; page: number }[] = [];
    forEachBlock(layout, numTokens, pageTokens, (page, pageOffset, layer, part, stateOffset, numBlockBytes) => {
        runs.push({ at: (part === "k" ? kStarts : vStarts)[layer]! + stateOffset, bytes: target(page, pageOffset, numBlockBytes), page });
        numValidBytesByPage[page] = Math.max(numValidBytesByPage[page]!, pageOffset + numBlockBytes);
    });
    runs.sort((a, b) => a.at - b.at);
    let covered = 0;
    for (const run of runs) {
        invariant(run.at === covered, () => `state target: a run starts at KV byte ${run.at}, the runs before it end at ${covered}`);
        covered += run.bytes.length;
    }
    invariant(covered === numKvBytes, () => `state target: the runs cover ${covered} of ${numKvBytes} KV bytes`);
    return {
        numTokens,
        meta: Buffer.alloc(numBytes - numKvBytes),
        runs: runs.map((run) => run.bytes),
        runPages: Uint32Array.from(runs, (run) => run.page),
        numBytes,
        numValidBytesByPage
    };
}

export interface AssembleStateOptions {
    /** The tokens the state stands for; their count is the number of positions read from the pages. */
    readonly tokens: Int32Array | readonly number[];
    readonly layout: KvLayout;
    /** The layout measured from the target context: assembly refuses anything else. */
    readonly targetLayout: KvLayout;
    /** The target context's stream count; the state is re-framed to it. */
    readonly targetNumStreams: number;
    readonly pages: PageBlockAccess;
    readonly pageTokens: number;
}

/**
 * A state as the runs of bytes it is made of, in file order: its metadata, and views of the
 * pages' bytes where the KV goes. Written out with one gathered write (`writev`), it reaches the
 * state file with one copy and no buffer of its size; valid only while the pages are held.
 */
export interface StateChunks {
    readonly chunks: readonly Uint8Array[];
    /** The chunks' total length: the state file's size. */
    readonly numBytes: number;
    /** The page (its index in token order) each chunk views, -1 for the metadata's chunks. */
    readonly chunkPages: Int32Array;
    /**
     * When given, the load verifies every page as it reads it, in the same native job, and must
     * fill `recomputed` (see `PageChecks`).
     */
    readonly pageChecks?: PageChecks;
}

/**
 * What a load that verifies the pages it reads is given, page by page in token order. A page's
 * chunks come in the order of its bytes (`bytesPerToken`), so the hash reads each byte as it is
 * copied into the cache. Where any page's recomputed checksum differs from its expected one, the
 * load erases the sequence before anything can decode over it and loads no token.
 */
export interface PageChecks {
    /** The state's `chunkPages`: which page each chunk views. */
    readonly chunkPages: Int32Array;
    /** Each page's valid bytes: the bytes its checksum covers. */
    readonly pages: readonly Uint8Array[];
    /** Each checksum's seed: the page's first token position (`pageChecksum`). */
    readonly seeds: BigUint64Array;
    /** The checksum each page was sealed with. */
    readonly expected: BigUint64Array;
    /** Filled by the load: each page's `pageChecksum` of its valid bytes as read. */
    readonly recomputed: BigUint64Array;
}

/** A chunked state as one buffer (one copy), for callers that keep it past the pages' leases. */
export function concatStateChunks(state: StateChunks): Buffer {
    return Buffer.concat(state.chunks, state.numBytes);
}

/**
 * Builds a `llama_state_seq_load_file` state for the target context from pages: the header, the
 * tokens, the target's stream count with the sequence in the first stream (llama.cpp loads a
 * single-sequence state into the destination sequence's own stream whichever slot it sits in),
 * cell metadata for positions `[0, n)`, then the layer data. One copy of the bytes.
 */
export function assembleSequenceState(options: AssembleStateOptions): Buffer {
    return concatStateChunks(assembleSequenceStateChunks(options));
}

/**
 * The state `assembleSequenceState` builds, as chunks: the metadata in small buffers of its own,
 * the KV as views of the pages (`PageBlockAccess.view`), no byte copied. Every byte of the state
 * is covered by exactly one chunk, checked as they are put in order: a gap would be bytes no page
 * wrote, an overlap two pages claiming the same position.
 */
export function assembleSequenceStateChunks({
    tokens,
    layout,
    targetLayout,
    targetNumStreams,
    pages,
    pageTokens
}: AssembleStateOptions): StateChunks {
    const mismatch = describeLayoutMismatch(targetLayout, layout);
    if (mismatch !== undefined) {
        throw new StateLayoutMismatchError(mismatch);
    }
    const numTokens = tokens.length;
    invariant(numTokens > 0, "a state to assemble needs at least one token");
    invariant(
        pages.numPages === numPagesFor(numTokens, pageTokens),
        () =>
            `assembling ${numTokens} tokens at ${pageTokens} per page needs ${numPagesFor(numTokens, pageTokens)} pages, got ${pages.numPages}`
    );
    invariant(
        Number.isInteger(targetNumStreams) && targetNumStreams >= 1,
        () => `target stream count ${targetNumStreams} is not a positive integer`
    );

    const numBytes = sequenceStateBytes(numTokens, layout, targetNumStreams);
    const meta = Buffer.alloc(numBytes - numTokens * bytesPerToken(layout));
    /** Runs in file order once sorted: `at` is the run's offset in the state. */
    const runs: { at: number; bytes: Uint8Array; page: number }[] = [];
    let offset = 0; // in the state
    let metaOffset = 0;
    let metaRunStart = 0;
    const u32 = (value: number): void => {
        metaOffset = meta.writeUInt32LE(value, metaOffset);
        offset += 4;
    };
    const i32 = (value: number): void => {
        metaOffset = meta.writeInt32LE(value, metaOffset);
        offset += 4;
    };
    const u64 = (value: number): void => {
        metaOffset = meta.writeBigUInt64LE(BigInt(value), metaOffset);
        offset += 8;
    };
    /** Ends the metadata run before `numDataBytes` of KV, which the pages provide. */
    const skipData = (numDataBytes: number): number => {
        runs.push({ at: offset - (metaOffset - metaRunStart), bytes: meta.subarray(metaRunStart, metaOffset), page: -1 });
        metaRunStart = metaOffset;
        const start = offset;
        offset += numDataBytes;
        return start;
    };

    // The tokens and the cells, a value per token each, go through a DataView: Buffer's checked
    // writes, a call apiece, made these loops a visible part of a long prompt's handoff.
    const values = new DataView(meta.buffer, meta.byteOffset, meta.length);
    u32(STATE_SEQ_MAGIC);
    u32(STATE_SEQ_VERSION);
    u32(numTokens);
    tokens.forEach((token, index) => values.setInt32(metaOffset + index * 4, token, true));
    metaOffset += numTokens * 4;
    offset += numTokens * 4;
    u32(targetNumStreams);
    u32(numTokens);
    for (let position = 0; position < numTokens; position++) {
        const at = metaOffset + position * 12;
        values.setInt32(at, position, true);
        values.setUint32(at + 4, 1, true); // one sequence per cell
        values.setInt32(at + 8, 0, true); // the sequence id is replaced by the destination sequence on load
    }
    metaOffset += numTokens * 12;
    offset += numTokens * 12;
    u32(layout.vTransposed ? 1 : 0);
    u32(layout.layers.length);

    // Layer sections: all K first, then all V, each preceded by its type and row size.
    const kStarts: number[] = [];
    const vStarts: number[] = [];
    for (const layer of layout.layers) {
        i32(layer.kType);
        u64(layer.kRowBytes);
        kStarts.push(skipData(numTokens * layer.kRowBytes));
    }
    for (const layer of layout.layers) {
        i32(layer.vType);
        if (layout.vTransposed) {
            u32(layer.vElementBytes);
            u32(layer.numVElements);
        } else {
            u64(layer.vRowBytes);
        }
        vStarts.push(skipData(numTokens * layer.vRowBytes));
    }
    for (let stream = 1; stream < targetNumStreams; stream++) {
        u32(0);
    } // the other streams: no cells
    runs.push({ at: offset - (metaOffset - metaRunStart), bytes: meta.subarray(metaRunStart, metaOffset), page: -1 });
    invariant(
        offset === numBytes && metaOffset === meta.length,
        () => `assembled state is ${offset} bytes (${metaOffset} of metadata), ${numBytes} (${meta.length}) were planned`
    );

    forEachBlock(layout, numTokens, pageTokens, (page, pageOffset, layer, part, stateOffset, numBlockBytes) => {
        runs.push({
            at: (part === "k" ? kStarts : vStarts)[layer]! + stateOffset,
            bytes: pages.view(page, pageOffset, numBlockBytes),
            page
        });
    });
    runs.sort((a, b) => a.at - b.at);
    let covered = 0;
    for (const run of runs) {
        invariant(run.at === covered, () => `assembled state: a run starts at byte ${run.at}, the runs before it end at ${covered}`);
        covered += run.bytes.length;
    }
    invariant(covered === numBytes, () => `assembled state: the runs cover ${covered} of ${numBytes} bytes`);
    const nonEmpty = runs.filter((run) => run.bytes.length > 0);
    return { chunks: nonEmpty.map((run) => run.bytes), numBytes, chunkPages: Int32Array.from(nonEmpty, (run) => run.page) };
}
