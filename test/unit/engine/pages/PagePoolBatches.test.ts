import { describe, expect, it } from "vitest";
import { DisposedError, ChecksumMismatchError, StaleGenerationError } from "../../../../engine/pages/pageErrors.js";
import { pageChecksum } from "../../../../engine/pages/pageChecksum.js";
import { OFF_THREAD_MIN_BYTES } from "../../../../engine/pages/PageHasher.js";
import { PageState } from "../../../../engine/pages/PageState.js";
import type { PagePool } from "../../../../engine/pages/PagePool.js";
import type { Reservation } from "../../../../engine/pages/Reservation.js";
import { alice, bob, expectNoLeaks, makePool, req, writeThrough } from "./pagePoolFixtures.js";

// Batch seals and verifications (PagePool.sealPages / verifyPages): pages big enough are hashed off
// the engine's thread, in parallel, and every claim is checked again once the checksums are back,
// so a page released, scrubbed or reused meanwhile is refused, never sealed or passed.

const PAGE_TOKENS = 16;
/** Four pages of half the off-thread threshold: a batch of all of them goes to the hashing threads. */
const BIG_POOL = { numPages: 6, pageTokens: PAGE_TOKENS, pageBytes: OFF_THREAD_MIN_BYTES / 2 };
const NUM_PAGES = 4;

/** Different bytes on every page, so a page hashed at the wrong place or offset shows. */
function pageBytes(index: number): Uint8Array {
    const bytes = new Uint8Array(BIG_POOL.pageBytes);
    for (let offset = 0; offset < bytes.length; offset += 4096) {
        bytes[offset] = 1 + index;
        bytes[offset + 1] = offset % 251;
    }
    return bytes;
}

function reserveAndWrite(pool: PagePool, holder: string, workspace = alice): Reservation {
    const reservation = pool.reserve({ workspace, holder: req(holder), numPages: NUM_PAGES, firstToken: 0 });
    reservation.pages.forEach((handle, index) => writeThrough(pool, handle, pageBytes(index)));
    return reservation;
}

const toSeal = (reservation: Reservation) =>
    reservation.pages.map((handle, index) => ({ pageId: handle.pageId, numTokens: index === NUM_PAGES - 1 ? 5 : PAGE_TOKENS }));
const pagesOf = (reservation: Reservation) => reservation.pages.map((handle) => handle.pageId);

describe("PagePool batch seals and verifications off the engine's thread", () => {
    it("seals every page with the checksum seal() computes, and verifies them, with the event loop free meanwhile", async () => {
        const pool = makePool(BIG_POOL);
        const reservation = reserveAndWrite(pool, "r1");
        let numTurns = 0;
        let sealing = true;
        const tick = (): void => {
            if (sealing) {
                numTurns++;
                setImmediate(tick);
            }
        };
        setImmediate(tick);
        const sealed = await pool.sealPages(toSeal(reservation), reservation.generation);
        sealing = false;
        expect(numTurns).toBeGreaterThan(0); // the loop turned while the pages were hashed elsewhere; inline, it never does
        expect(sealed).toEqual({
            ok: true,
            checksums: reservation.pages.map((_, index) => pageChecksum(pageBytes(index), index * PAGE_TOKENS))
        });
        expect(reservation.pages.map((handle) => pool.pageInfo(handle.pageId).state)).toEqual(Array(NUM_PAGES).fill(PageState.Sealed));
        expect(pool.pageInfo(reservation.pages[NUM_PAGES - 1]!.pageId).tokenEnd).toBe((NUM_PAGES - 1) * PAGE_TOKENS + 5);

        const verified = await pool.verifyPages(pagesOf(reservation), reservation.generation);
        expect(verified).toEqual({ ok: true, checksums: sealed.ok ? sealed.checksums : [] });
        expect(reservation.pages.map((handle) => pool.verify(handle.pageId, reservation.generation))).toEqual(
            (sealed.ok ? sealed.checksums : []).map((checksum) => ({ ok: true, checksum }))
        );
        expect(pool.release(reservation).ok).toBe(true);
        expectNoLeaks(pool);
    });

    it("reports the first page whose bytes changed after the seal, counting that one failure as verify() page by page does", async () => {
        const pool = makePool(BIG_POOL);
        const reservation = reserveAndWrite(pool, "r1");
        expect((await pool.sealPages(toSeal(reservation), reservation.generation)).ok).toBe(true);
        pool.injectByteFlip(reservation.pages[3]!.pageId, reservation.generation, 4096);
        pool.injectByteFlip(reservation.pages[1]!.pageId, reservation.generation, 7);

        const verified = await pool.verifyPages(pagesOf(reservation), reservation.generation);
        expect(verified.ok).toBe(false);
        expect(verified.ok ? undefined : verified.index).toBe(1);
        expect(verified.ok ? undefined : verified.error).toBeInstanceOf(ChecksumMismatchError);
        expect(pool.counters.checksumFailures).toBe(1);
        expect(pool.release(reservation).ok).toBe(true);
        expectNoLeaks(pool);
    });

    it("refuses a seal whose request released its pages while they were being hashed: nothing sealed, the pages come back zero", async () => {
        const pool = makePool(BIG_POOL);
        const reservation = reserveAndWrite(pool, "r1");
        const sealing = pool.sealPages(toSeal(reservation), reservation.generation);
        expect(pool.release(reservation).ok).toBe(true); // cancelled while the threads hash: the pages are scrubbed now

        const sealed = await sealing;
        expect(sealed.ok).toBe(false);
        expect(sealed.ok ? undefined : sealed.index).toBe(0);
        expect(sealed.ok ? undefined : sealed.error).toBeInstanceOf(StaleGenerationError);
        expect(pool.counters.staleSealsRefused).toBe(1);
        expectNoLeaks(pool);
    });

    it("never passes a verification whose pages were released and sealed again by another holder while they were being hashed", async () => {
        const pool = makePool(BIG_POOL);
        const first = reserveAndWrite(pool, "r1");
        expect((await pool.sealPages(toSeal(first), first.generation)).ok).toBe(true);
        const verifying = pool.verifyPages(pagesOf(first), first.generation);
        expect(pool.release(first).ok).toBe(true);
        // Another holder takes the same pages at a new generation and seals the very same bytes.
        const second = reserveAndWrite(pool, "r2", bob);
        expect(new Set([...pagesOf(second), ...pagesOf(first)]).size).toBeLessThanOrEqual(BIG_POOL.numPages);
        for (const [index, handle] of second.pages.entries()) {
            expect(pool.seal(handle.pageId, second.generation, toSeal(second)[index]!.numTokens).ok).toBe(true);
        }

        const verified = await verifying;
        expect(verified.ok).toBe(false);
        expect(verified.ok ? undefined : verified.error).toBeInstanceOf(StaleGenerationError);
        expect(pool.release(second).ok).toBe(true);
        expectNoLeaks(pool);
    });

    it("throws the pool's DisposedError when the pool is disposed while its pages are being hashed", async () => {
        const pool = makePool(BIG_POOL);
        const reservation = reserveAndWrite(pool, "r1");
        const sealing = pool.sealPages(toSeal(reservation), reservation.generation);
        pool.dispose();
        await expect(sealing).rejects.toBeInstanceOf(DisposedError);
    });

    it("seals and verifies a small batch on the engine's thread, pausing before each page, with the same results as seal() and verify()", async () => {
        const pool = makePool();
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 3, firstToken: 0 });
        reservation.pages.forEach((handle, index) => writeThrough(pool, handle, new Uint8Array(64).fill(index + 1)));
        let numPauses = 0;
        const pause = (): Promise<void> => {
            numPauses++;
            return Promise.resolve();
        };
        const pages = reservation.pages.map((handle) => ({ pageId: handle.pageId, numTokens: 4 }));
        const sealed = await pool.sealPages(pages, reservation.generation, pause);
        expect(sealed).toEqual({
            ok: true,
            checksums: [1, 2, 3].map((fill, index) => pageChecksum(new Uint8Array(64).fill(fill), index * 4))
        });
        expect(numPauses).toBe(3);
        expect((await pool.sealPages(pages, reservation.generation)).ok).toBe(false); // a second seal, refused as seal() refuses it
        expect(pool.counters.writesAfterSealRefused).toBe(1);
        expect(await pool.verifyPages(pagesOf(reservation), reservation.generation)).toEqual(sealed);
        expect(pool.release(reservation).ok).toBe(true);
        expectNoLeaks(pool);
    });
});
