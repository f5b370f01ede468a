import { describe, expect, it } from "vitest";
import { PageArena } from "../../../../engine/pages/PageArena.js";

// Writes and scrubs copy with Buffer's native copy (V8 fills and sets shared memory slowly): a
// write lands exactly where it is asked, and a scrub zeroes every byte of its page, the last
// block's tail included, and no byte of the next.

describe("PageArena writes and scrubs", () => {
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

    it("writes the bytes a view spans, from its offset in a larger buffer, and refuses what would run past the arena", () => {
        const arena = new PageArena(2, 64);
        const backing = new Uint8Array(100).map((_, index) => index + 1);
        arena.write(1, 8, backing.subarray(30, 40)); // a plain Uint8Array view, not a Buffer
        expect(Array.from(arena.readCopy(1, 8, 18))).toEqual(Array.from({ length: 10 }, (_, index) => 31 + index));
        expect(arena.readCopy(1, 0, 8).every((byte) => byte === 0) && arena.readCopy(1, 18, 64).every((byte) => byte === 0)).toBe(true);
        expect(arena.isZero(0)).toBe(true);
        expect(() => arena.write(1, 60, backing.subarray(0, 10))).toThrow(/a write of 10 bytes at offset 60 of page 1 copied 4/);
        arena.dispose();
    });
});
