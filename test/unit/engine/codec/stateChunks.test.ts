import { describe, expect, it } from "vitest";
import { bytesPerToken, type KvLayout } from "../../../../engine/codec/KvLayout.js";
import { parseSequenceState } from "../../../../engine/codec/parseSequenceState.js";
import {
    assembleSequenceStateChunks,
    bufferPageAccess,
    concatStateChunks,
    numPagesFor,
    scatterRangeToPages,
    scatterStateToPages,
    sequenceStateBytes,
    type PageBlockAccess
} from "../../../../engine/codec/statePages.js";
import { alice, makePool, req, writeAndSeal } from "../pages/pagePoolFixtures.js";

// The handoff loads a state straight from its pages (one gathered write, no buffer of the state's
// size): the chunks must be exactly the state, byte for byte, and views of the pages, not copies.

const PAGE_TOKENS = 4;

function layoutOf(vTransposed: boolean): KvLayout {
    const layer = vTransposed
        ? { kType: 1, vType: 1, kRowBytes: 6, vRowBytes: 6, vElementBytes: 2, numVElements: 3 }
        : { kType: 1, vType: 1, kRowBytes: 6, vRowBytes: 4, vElementBytes: 0, numVElements: 0 };
    return { vTransposed, layers: [layer, { ...layer, kRowBytes: layer.kRowBytes * 2 }] };
}

/** Pages for `numTokens` positions, every byte a function of its page and offset (never 0). */
function patternedPages(layout: KvLayout, numTokens: number): Buffer[] {
    const pageBytes = PAGE_TOKENS * bytesPerToken(layout);
    return Array.from({ length: numPagesFor(numTokens, PAGE_TOKENS) }, (_, page) =>
        Buffer.from(Array.from({ length: pageBytes }, (_, i) => 1 + ((page * 131 + i * 7) % 255)))
    );
}

function chunksOf(
    layout: KvLayout,
    numTokens: number,
    pages: PageBlockAccess,
    numStreams = 1
): ReturnType<typeof assembleSequenceStateChunks> {
    return assembleSequenceStateChunks({
        tokens: Array.from({ length: numTokens }, (_, i) => 100 + i),
        layout,
        targetLayout: layout,
        targetNumStreams: numStreams,
        pages,
        pageTokens: PAGE_TOKENS
    });
}

describe("a state assembled as chunks", () => {
    for (const vTransposed of [false, true]) {
        it(`is the state, byte for byte, and round-trips through pages (V ${vTransposed ? "transposed" : "in rows"})`, () => {
            const layout = layoutOf(vTransposed);
            for (const numTokens of [1, 3, 4, 5, 9]) {
                const pages = patternedPages(layout, numTokens);
                const state = chunksOf(layout, numTokens, bufferPageAccess(pages), 3);
                const bytes = concatStateChunks(state);
                expect(state.numBytes).toBe(sequenceStateBytes(numTokens, layout, 3));
                expect(bytes.length).toBe(state.numBytes);
                const parsed = parseSequenceState(bytes);
                expect(Array.from(parsed.tokens)).toEqual(Array.from({ length: numTokens }, (_, i) => 100 + i));
                expect(parsed.numStreams).toBe(3);

                // Scattered back into fresh pages, the state gives the same page bytes over the valid positions.
                const copies = patternedPages(layout, numTokens).map((page) => Buffer.alloc(page.length));
                scatterStateToPages(parsed, bufferPageAccess(copies), PAGE_TOKENS);
                expect(concatStateChunks(chunksOf(layout, numTokens, bufferPageAccess(copies), 3))).toEqual(bytes);
            }
        });
    }

    it("scattered a layer of a page at a time, page after page, fills the pages as one scatter does", () => {
        for (const vTransposed of [false, true]) {
            const layout = layoutOf(vTransposed);
            const numTokens = 9;
            const parsed = parseSequenceState(
                concatStateChunks(chunksOf(layout, numTokens, bufferPageAccess(patternedPages(layout, numTokens))))
            );
            const whole = patternedPages(layout, numTokens).map((page) => Buffer.alloc(page.length));
            scatterStateToPages(parsed, bufferPageAccess(whole), PAGE_TOKENS);
            const pieces = whole.map((page) => Buffer.alloc(page.length));
            for (let page = 0; page < pieces.length; page++) {
                for (let layer = 0; layer < layout.layers.length; layer++) {
                    scatterRangeToPages(parsed, bufferPageAccess(pieces), PAGE_TOKENS, {
                        firstLayer: layer,
                        endLayer: layer + 1,
                        firstPage: page,
                        endPage: page + 1
                    });
                }
                expect(pieces.slice(page + 1).every((later) => later.every((byte) => byte === 0))).toBe(true); // no page before its turn
            }
            expect(pieces).toEqual(whole);
            expect(() =>
                scatterRangeToPages(parsed, bufferPageAccess(pieces), PAGE_TOKENS, { firstLayer: 0, endLayer: 1, firstPage: 2, endPage: 4 })
            ).toThrow(/scatter of pages \[2, 4\) of a state in 3/);
        }
    });

    it("views the pages' bytes instead of copying them: a page changed afterwards shows in the chunks", () => {
        const layout = layoutOf(false);
        const pages = patternedPages(layout, 5);
        const state = chunksOf(layout, 5, bufferPageAccess(pages));
        const before = concatStateChunks(state);
        pages[1]![0] = pages[1]![0]! ^ 0xff; // page 1's first byte: layer 0's K row of position 4
        const after = concatStateChunks(state);
        expect(after.equals(before)).toBe(false);
        expect(after.length).toBe(before.length);
    });

    it("refuses a page access that leaves bytes of the state unwritten", () => {
        const layout = layoutOf(false);
        const pages = bufferPageAccess(patternedPages(layout, 5));
        const short: PageBlockAccess = { ...pages, view: (page, offset, numBytes) => pages.view(page, offset, numBytes - 1) };
        expect(() => chunksOf(layout, 5, short)).toThrow(/assembled state: a run starts at byte \d+, the runs before it end at \d+/);
    });
});

describe("a read lease's view", () => {
    it("is bounded by the owner's valid bytes and ends with the lease", () => {
        const pool = makePool();
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 0 });
        const handle = reservation.pages[0]!;
        writeAndSeal(pool, handle, new Uint8Array(40).fill(7), 2);
        const leased = pool.acquireReadLease(handle.pageId, handle.generation);
        if (!leased.ok) {
            throw leased.error;
        }
        expect(Array.from(leased.lease.view(8, 4))).toEqual([7, 7, 7, 7]);
        expect(() => leased.lease.view(38, 4)).toThrow(/read of bytes \[38, 42\) of page \d+ at generation \d+, past its 40 valid bytes/);
        leased.lease.release();
        expect(() => leased.lease.view(0, 4)).toThrow(/view through a released read lease/);
        pool.release(reservation);
    });
});
