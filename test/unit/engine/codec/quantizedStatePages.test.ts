import { describe, expect, it } from "vitest";
import { StateFormatError } from "../../../../engine/codec/codecErrors.js";
import { kvCacheTypes, kvCacheTypeTraits, kvRowBytes, whyKvCacheTypeRefused } from "../../../../engine/codec/kvCacheTypes.js";
import { bytesPerToken, type KvLayout } from "../../../../engine/codec/KvLayout.js";
import { parseSequenceState } from "../../../../engine/codec/parseSequenceState.js";
import { assembleSequenceState, bufferPageAccess, numPagesFor, scatterStateToPages } from "../../../../engine/codec/statePages.js";

// Pure logic of the codec over quantized layouts; test/model/kvCacheTypes.test.ts runs the same through llama.cpp.

const PAGE_TOKENS = 16;

function layoutOf(kType: number, vType: number, kRowBytes: number, vRowBytes: number, numLayers = 2): KvLayout {
    const layer = { kType, vType, kRowBytes, vRowBytes, vElementBytes: 0, numVElements: 0 };
    return { vTransposed: false, layers: Array.from({ length: numLayers }, () => layer) };
}

/** Pages of `numTokens` positions whose every byte is a function of its page and offset. */
function patternedPages(layout: KvLayout, numTokens: number): Buffer[] {
    const pageBytes = PAGE_TOKENS * bytesPerToken(layout);
    return Array.from({ length: numPagesFor(numTokens, PAGE_TOKENS) }, (_, page) => {
        const bytes = Buffer.alloc(pageBytes);
        for (let i = 0; i < pageBytes; i++) {
            bytes[i] = (page * 131 + i * 7) & 0xff;
        }
        return bytes;
    });
}

function assemble(layout: KvLayout, numTokens: number, pages: Buffer[]): Buffer {
    return assembleSequenceState({
        tokens: Array.from({ length: numTokens }, (_, i) => i + 1),
        layout,
        targetLayout: layout,
        targetNumStreams: 1,
        pages: bufferPageAccess(pages),
        pageTokens: PAGE_TOKENS
    });
}

describe("KV cache types", () => {
    it("give rows of whole blocks: F16 2 bytes a value, Q8_0 34 bytes per 32 values, Q4_0 18", () => {
        expect(kvCacheTypes).toEqual(["f16", "q8_0", "q4_0"]);
        expect(kvRowBytes("f16", 64)).toBe(128);
        expect(kvRowBytes("q8_0", 64)).toBe(68);
        expect(kvRowBytes("q4_0", 64)).toBe(36);
        expect(kvRowBytes("q8_0", 1024)).toBe(1088);
        expect(kvRowBytes("q8_0", 48)).toBeUndefined();
        expect(kvRowBytes("f16", 48)).toBe(96);
        expect(kvCacheTypeTraits.q8_0.ggmlType).toBe(8);
        expect(kvCacheTypeTraits.q4_0.ggmlType).toBe(2);
    });

    it("are refused with the reason: a quantized cache without flash attention, heads not whole blocks", () => {
        const heads = { architecture: "llama", kHeadSize: 64, vHeadSize: 64 };
        expect(whyKvCacheTypeRefused("f16", false, heads)).toBeUndefined();
        expect(whyKvCacheTypeRefused("q8_0", true, heads)).toBeUndefined();
        expect(whyKvCacheTypeRefused("q4_0", false, heads)).toMatch(/^a Q4_0 KV cache needs flash attention/);
        expect(whyKvCacheTypeRefused("q8_0", true, { ...heads, kHeadSize: 80 })).toBe(
            "the llama model's K heads are 80 values wide, not a whole number of Q8_0's 32-value blocks"
        );
        expect(whyKvCacheTypeRefused("q4_0", true, { architecture: "gemma3", kHeadSize: 256, vHeadSize: 16 })).toBe(
            "the gemma3 model's V heads are 16 values wide, not a whole number of Q4_0's 32-value blocks"
        );
    });
});

describe("the codec over a quantized layout", () => {
    it.each([
        { name: "Q8_0", type: 8, rowBytes: 68 },
        { name: "Q4_0", type: 2, rowBytes: 36 },
        { name: "Q8_0 K over F16 V", type: 8, rowBytes: 68, vType: 1, vRowBytes: 128 }
    ])("moves $name rows between a state and pages byte for byte, at every page boundary", ({ type, rowBytes, vType, vRowBytes }) => {
        const layout = layoutOf(type, vType ?? type, rowBytes, vRowBytes ?? rowBytes);
        for (const numTokens of [1, 15, 16, 17, 33]) {
            const pages = patternedPages(layout, numTokens);
            const state = assemble(layout, numTokens, pages);
            const parsed = parseSequenceState(state);
            expect(parsed.layout).toEqual(layout);
            expect(parsed.layers[0]!.k).toHaveLength(numTokens * rowBytes);

            const copies = pages.map((page) => Buffer.alloc(page.length));
            scatterStateToPages(parsed, bufferPageAccess(copies), PAGE_TOKENS);
            // the positions past the owner's length stay zero; everything before them is the same bytes
            expect(assemble(layout, numTokens, copies).equals(state), `${numTokens} tokens`).toBe(true);
        }
    });

    it("refuses a state whose quantized rows are not whole blocks, saying which", () => {
        const state = assemble(layoutOf(8, 8, 67, 68), 3, patternedPages(layoutOf(8, 8, 67, 68), 3));
        expect(() => parseSequenceState(state)).toThrow(StateFormatError);
        expect(() => parseSequenceState(state)).toThrow(/layer 0's K rows are 67 bytes of Q8_0, not whole 34-byte blocks of 32 values/);

        const vState = assemble(layoutOf(2, 2, 36, 40), 3, patternedPages(layoutOf(2, 2, 36, 40), 3));
        expect(() => parseSequenceState(vState)).toThrow(/layer 0's V rows are 40 bytes of Q4_0, not whole 18-byte blocks/);
    });

    it("refuses a transposed V of a quantized type, which llama.cpp never writes", () => {
        const layer = { kType: 8, vType: 8, kRowBytes: 68, vRowBytes: 34 * 64, vElementBytes: 34, numVElements: 64 };
        const layout: KvLayout = { vTransposed: true, layers: [layer] };
        const state = assemble(layout, 2, patternedPages(layout, 2));
        expect(() => parseSequenceState(state)).toThrow(/layer 0 has transposed V of type Q8_0, whose blocks span positions/);
    });
});
