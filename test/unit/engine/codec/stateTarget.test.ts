import { describe, expect, it } from "vitest";
import { bytesPerToken, type KvLayout } from "../../../../engine/codec/KvLayout.js";
import { StateFormatError } from "../../../../engine/codec/codecErrors.js";
import { parseSequenceState, parseSequenceStateMeta } from "../../../../engine/codec/parseSequenceState.js";
import {
    assembleSequenceState,
    bufferPageAccess,
    numPagesFor,
    planStateTarget,
    scatterStateToPages,
    type StateTarget
} from "../../../../engine/codec/statePages.js";
import { splitStateAsWritten, writeStateInto } from "../../../support/splitStateAsWritten.js";

// llama.cpp saves a state straight into pages (saveSequenceStateToChunks in the addon patch): what
// it writes with write() goes into the target's metadata, what it writes with write_tensor() (the
// KV rows, every layer's K, then every layer's V) into the runs in order. Saved that way, the pages
// must hold what a whole save scattered into them holds, byte for byte.

const PAGE_TOKENS = 4;
const NUM_STREAMS = 3;

function layoutOf(vTransposed: boolean): KvLayout {
    const layer = vTransposed
        ? { kType: 1, vType: 1, kRowBytes: 6, vRowBytes: 6, vElementBytes: 2, numVElements: 3 }
        : { kType: 1, vType: 1, kRowBytes: 6, vRowBytes: 4, vElementBytes: 0, numVElements: 0 };
    return { vTransposed, layers: [layer, { ...layer, kRowBytes: layer.kRowBytes * 2 }] };
}

/** A whole state of `numTokens` positions as a context of `NUM_STREAMS` streams saves it, every KV byte non-zero and a function of its place. */
function wholeState(layout: KvLayout, numTokens: number): Buffer {
    const pageBytes = PAGE_TOKENS * bytesPerToken(layout);
    const pages = Array.from({ length: numPagesFor(numTokens, PAGE_TOKENS) }, (_, page) =>
        Buffer.from(Array.from({ length: pageBytes }, (_, i) => 1 + ((page * 131 + i * 7) % 255)))
    );
    return assembleSequenceState({
        tokens: Array.from({ length: numTokens }, (_, i) => 500 + i),
        layout,
        targetLayout: layout,
        targetNumStreams: NUM_STREAMS,
        pages: bufferPageAccess(pages),
        pageTokens: PAGE_TOKENS
    });
}

/** What the addon's writer does with a target, checked to have written every byte. */
function saveInto(target: StateTarget, state: Buffer): void {
    expect(writeStateInto(target, state)).toBe(true);
}

function freshPages(layout: KvLayout, numTokens: number): Buffer[] {
    return Array.from({ length: numPagesFor(numTokens, PAGE_TOKENS) }, () => Buffer.alloc(PAGE_TOKENS * bytesPerToken(layout)));
}

function targetOn(pages: Buffer[], layout: KvLayout, numTokens: number): StateTarget {
    return planStateTarget(numTokens, layout, NUM_STREAMS, PAGE_TOKENS, (page, offset, numBytes) =>
        pages[page]!.subarray(offset, offset + numBytes)
    );
}

describe("a state saved straight into pages", () => {
    for (const vTransposed of [false, true]) {
        it(`fills the pages as a whole save scattered into them does (V ${vTransposed ? "transposed" : "in rows"})`, () => {
            const layout = layoutOf(vTransposed);
            for (const numTokens of [1, 3, 4, 5, 9]) {
                const state = wholeState(layout, numTokens);
                const scattered = freshPages(layout, numTokens);
                scatterStateToPages(parseSequenceState(state), bufferPageAccess(scattered), PAGE_TOKENS);

                const inPlace = freshPages(layout, numTokens);
                const target = targetOn(inPlace, layout, numTokens);
                expect(target.numBytes).toBe(state.length);
                expect(target.meta.length + target.runs.reduce((sum, run) => sum + run.length, 0)).toBe(state.length);
                saveInto(target, state);
                expect(inPlace).toEqual(scattered);

                // each page's valid length ends at its last written byte, and nothing past it was touched
                target.numValidBytesByPage.forEach((numValidBytes, page) => {
                    expect(inPlace[page]![numValidBytes - 1]).not.toBe(0);
                    expect(inPlace[page]!.subarray(numValidBytes).every((byte) => byte === 0)).toBe(true);
                });
                const fullPages = Math.floor(numTokens / PAGE_TOKENS);
                expect(target.numValidBytesByPage.slice(0, fullPages)).toEqual(
                    new Array<number>(fullPages).fill(PAGE_TOKENS * bytesPerToken(layout))
                );

                const meta = parseSequenceStateMeta(target.meta);
                const whole = parseSequenceState(state);
                expect(Array.from(meta.tokens)).toEqual(Array.from(whole.tokens));
                expect(meta.numCells).toBe(numTokens);
                expect(meta.numStreams).toBe(NUM_STREAMS);
                expect(meta.layout).toEqual(layout);
            }
        });
    }

    for (const vTransposed of [false, true]) {
        it(`writes each page from its first byte to its last, in llama.cpp's order (V ${vTransposed ? "transposed" : "in rows"})`, () => {
            // what lets the save hash a page as it writes it: the runs that land in one page, taken in
            // the order llama.cpp writes them, start at the page's first byte, each where the one before
            // it ended (a full page) or further on (the last page's gaps past its positions), and end
            // at its valid length
            const layout = layoutOf(vTransposed);
            for (const numTokens of [3, 4, 9]) {
                const pages = freshPages(layout, numTokens);
                const target = targetOn(pages, layout, numTokens);
                const ends = new Array<number>(pages.length).fill(0);
                for (const run of target.runs) {
                    const page = pages.findIndex(
                        (bytes) =>
                            bytes.buffer === run.buffer &&
                            run.byteOffset >= bytes.byteOffset &&
                            run.byteOffset < bytes.byteOffset + bytes.length
                    );
                    const offset = run.byteOffset - pages[page]!.byteOffset;
                    const full = (page + 1) * PAGE_TOKENS <= numTokens;
                    if (full) {
                        expect(offset).toBe(ends[page]);
                    } else {
                        expect(offset).toBeGreaterThanOrEqual(ends[page]!);
                    }
                    ends[page] = offset + run.length;
                }
                expect(ends).toEqual(target.numValidBytesByPage);
            }
        });
    }

    it("runs are the pages' bytes themselves, not copies", () => {
        const layout = layoutOf(false);
        const pages = freshPages(layout, 5);
        const target = targetOn(pages, layout, 5);
        target.runs[0]![0] = 9;
        expect(pages[0]![0]).toBe(9);
    });

    it("refuses a page access that leaves KV bytes without a place", () => {
        const layout = layoutOf(true);
        const pages = freshPages(layout, 5);
        expect(() =>
            planStateTarget(5, layout, NUM_STREAMS, PAGE_TOKENS, (page, offset, numBytes) =>
                pages[page]!.subarray(offset, offset + numBytes - 1)
            )
        ).toThrow(/state target: a run starts at KV byte \d+, the runs before it end at \d+/);
    });

    it("reads metadata that is not a state's as malformed: short, trailing bytes, cells out of order", () => {
        const layout = layoutOf(false);
        const { meta } = splitStateAsWritten(wholeState(layout, 5));
        expect(() => parseSequenceStateMeta(meta.subarray(0, meta.length - 4))).toThrow(StateFormatError);
        expect(() => parseSequenceStateMeta(Buffer.concat([meta, Buffer.alloc(4)]))).toThrow(/4 bytes follow the end of the state/);
        const swapped = Buffer.from(meta);
        // the first cell's position, after the header, the tokens, the stream count and the first stream's cell count
        swapped.writeInt32LE(3, 12 + 4 * 5 + 4 + 4);
        expect(() => parseSequenceStateMeta(swapped)).toThrow(/cell 0 holds position 3/);
    });

    it("names the byte of a cell that is not one sequence's, or out of place: the cell's count or its start", () => {
        const layout = layoutOf(false);
        const { meta } = splitStateAsWritten(wholeState(layout, 5));
        const cellsAt = 12 + 4 * 5 + 4 + 4; // header, tokens, stream count, the first stream's cell count
        const shared = Buffer.from(meta);
        shared.writeUInt32LE(2, cellsAt + 3 * 12 + 4); // cell 3 in two sequences
        expect(() => parseSequenceStateMeta(shared)).toThrow(/cell 3 belongs to 2 sequences/);
        expect(errorOffset(() => parseSequenceStateMeta(shared))).toBe(cellsAt + 3 * 12 + 4);
        const moved = Buffer.from(meta);
        moved.writeInt32LE(7, cellsAt + 4 * 12); // cell 4 at position 7
        expect(() => parseSequenceStateMeta(moved)).toThrow(/cell 4 holds position 7/);
        expect(errorOffset(() => parseSequenceStateMeta(moved))).toBe(cellsAt + 4 * 12);
    });
});

/** The offset a StateFormatError names, or the thrown value when it is none. */
function errorOffset(parse: () => unknown): unknown {
    try {
        parse();
    } catch (error) {
        return error instanceof StateFormatError ? error.offset : error;
    }
    return "nothing thrown";
}
