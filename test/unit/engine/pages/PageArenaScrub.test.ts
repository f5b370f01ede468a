import { describe, expect, it } from "vitest";
import { PageArena } from "../../../../engine/pages/PageArena.js";

// The scrub copies zeros over a page in blocks (V8 fills shared memory slowly); every byte of the
// page, the last block's tail included, must come back zero, and no byte of the next page change.

describe("PageArena scrub", () => {
    it("zeroes every byte of a page several blocks long with a partial last block, and nothing past it", () => {
        const pageBytes = 2 * 1024 * 1024 + 4096 + 7;
        const arena = new PageArena(3, pageBytes);
        const ones = new Uint8Array(pageBytes).fill(0xa5);
        for (let page = 0; page < 3; page++) {
            arena.write(page, 0, ones);
        }
        arena.scrub(1);
        expect(arena.isZero(1)).toBe(true);
        expect(arena.readCopy(1, 0, pageBytes).every((byte) => byte === 0)).toBe(true);
        expect(arena.readCopy(0, pageBytes - 1, pageBytes)[0]).toBe(0xa5); // the page before keeps its last byte
        expect(arena.readCopy(2, 0, 1)[0]).toBe(0xa5); // the page after keeps its first
        expect(arena.isZero(0) || arena.isZero(2)).toBe(false);
        arena.dispose();
    });
});
