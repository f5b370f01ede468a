import { invariant } from "../core/invariant.js";
import { StateLayoutMismatchError } from "./codecErrors.js";
import { bytesPerToken, describeLayoutMismatch, type KvLayout } from "./KvLayout.js";
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

/**
 * Runs `copy(pageIndex, pageOffset, stateOffset, numBytes)` for every contiguous block that moves
 * between a state's layer-major data and the pages' layout (see `bytesPerToken`). Positions
 * `[0, numTokens)` only: nothing past the owner's valid length is ever read or written.
 */
function forEachBlock(
    layout: KvLayout,
    numTokens: number,
    pageTokens: number,
    copy: (pageIndex: number, pageOffset: number, layer: number, part: "k" | "v", stateOffset: number, numBytes: number) => void
): void {
    const numPages = numPagesFor(numTokens, pageTokens);
    let layerOffset = 0;
    layout.layers.forEach((layer, layerIndex) => {
        const kBlock = pageTokens * layer.kRowBytes;
        for (let page = 0; page < numPages; page++) {
            const first = page * pageTokens;
            const count = Math.min(pageTokens, numTokens - first);
            copy(page, layerOffset, layerIndex, "k", first * layer.kRowBytes, count * layer.kRowBytes);
            if (!layout.vTransposed) {
                copy(page, layerOffset + kBlock, layerIndex, "v", first * layer.vRowBytes, count * layer.vRowBytes);
            } else {
                const run = pageTokens * layer.vElementBytes;
                for (let element = 0; element < layer.numVElements; element++) {
                    copy(
                        page,
                        layerOffset + kBlock + element * run,
                        layerIndex,
                        "v",
                        (element * numTokens + first) * layer.vElementBytes,
                        count * layer.vElementBytes
                    );
                }
            }
        }
        layerOffset += pageTokens * (layer.kRowBytes + layer.vRowBytes);
    });
}

/** How the codec reaches page bytes: through the pool's leases in the engine, plain buffers in tests. */
export interface PageBlockAccess {
    /** Pages available, in token order. */
    readonly numPages: number;
    write(pageIndex: number, pageOffset: number, bytes: Uint8Array): void;
    read(pageIndex: number, pageOffset: number, numBytes: number): Uint8Array;
}

/** Page access over plain buffers, each `pageTokens × bytesPerToken` bytes. */
export function bufferPageAccess(pages: readonly Buffer[]): PageBlockAccess {
    return {
        numPages: pages.length,
        write: (pageIndex, pageOffset, bytes) => {
            pages[pageIndex]!.set(bytes, pageOffset);
        },
        read: (pageIndex, pageOffset, numBytes) => pages[pageIndex]!.subarray(pageOffset, pageOffset + numBytes)
    };
}

/** Copies a parsed state's KV into pages (zeroed, `pageTokens × bytesPerToken(layout)` bytes each). */
export function scatterStateToPages(state: ParsedSequenceState, pages: PageBlockAccess, pageTokens: number): void {
    invariant(
        pages.numPages === numPagesFor(state.numCells, pageTokens),
        () =>
            `scatter of ${state.numCells} tokens at ${pageTokens} per page needs ${numPagesFor(state.numCells, pageTokens)} pages, got ${pages.numPages}`
    );
    forEachBlock(state.layout, state.numCells, pageTokens, (page, pageOffset, layer, part, stateOffset, numBytes) => {
        pages.write(page, pageOffset, state.layers[layer]![part].subarray(stateOffset, stateOffset + numBytes));
    });
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
 * Builds a `llama_state_seq_load_file` state for the target context from pages: the header, the
 * tokens, the target's stream count with the sequence in the first stream (llama.cpp loads a
 * single-sequence state into the destination sequence's own stream whichever slot it sits in),
 * cell metadata for positions `[0, n)`, then the layer data.
 */
export function assembleSequenceState({ tokens, layout, targetLayout, targetNumStreams, pages, pageTokens }: AssembleStateOptions): Buffer {
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

    const state = Buffer.alloc(sequenceStateBytes(numTokens, layout, targetNumStreams));
    let offset = 0;
    const u32 = (value: number): void => {
        offset = state.writeUInt32LE(value, offset);
    };
    const i32 = (value: number): void => {
        offset = state.writeInt32LE(value, offset);
    };
    const u64 = (value: number): void => {
        offset = state.writeBigUInt64LE(BigInt(value), offset);
    };

    u32(STATE_SEQ_MAGIC);
    u32(STATE_SEQ_VERSION);
    u32(numTokens);
    for (const token of tokens) {
        i32(token);
    }
    u32(targetNumStreams);
    u32(numTokens);
    for (let position = 0; position < numTokens; position++) {
        i32(position);
        u32(1); // one sequence per cell
        i32(0); // the sequence id is replaced by the destination sequence on load
    }
    u32(layout.vTransposed ? 1 : 0);
    u32(layout.layers.length);

    // Layer sections: all K first, then all V, each preceded by its type and row size.
    const kStarts: number[] = [];
    const vStarts: number[] = [];
    for (const layer of layout.layers) {
        i32(layer.kType);
        u64(layer.kRowBytes);
        kStarts.push(offset);
        offset += numTokens * layer.kRowBytes;
    }
    for (const layer of layout.layers) {
        i32(layer.vType);
        if (layout.vTransposed) {
            u32(layer.vElementBytes);
            u32(layer.numVElements);
        } else {
            u64(layer.vRowBytes);
        }
        vStarts.push(offset);
        offset += numTokens * layer.vRowBytes;
    }
    for (let stream = 1; stream < targetNumStreams; stream++) {
        u32(0);
    } // the other streams: no cells
    invariant(offset === state.length, () => `assembled state is ${offset} bytes, ${state.length} were allocated`);

    forEachBlock(layout, numTokens, pageTokens, (page, pageOffset, layer, part, stateOffset, numBytes) => {
        const start = (part === "k" ? kStarts : vStarts)[layer]! + stateOffset;
        state.set(pages.read(page, pageOffset, numBytes), start);
    });
    return state;
}
