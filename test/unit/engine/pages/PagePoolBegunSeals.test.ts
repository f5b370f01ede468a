import { describe, expect, it } from "vitest";
import { ChecksumMismatchError, DisposedError, StaleGenerationError } from "../../../../engine/pages/pageErrors.js";
import { pageChecksum } from "../../../../engine/pages/pageChecksum.js";
import { OFF_THREAD_MIN_BYTES } from "../../../../engine/pages/PageHasher.js";
import type { PagePool } from "../../../../engine/pages/PagePool.js";
import type { Reservation } from "../../../../engine/pages/Reservation.js";
import { alice, bob, expectNoLeaksOnceZeroed, makePool, req, writeThrough } from "./pagePoolFixtures.js";

// Seals begun as each page is finished (PagePool.beginSeal): a page's checksum is computed off the
// engine's thread while its writer writes the next page, and sealPages takes it. It is taken only
// for the bytes it hashed: a page written again, released, or reused by another holder is hashed anew.

const PAGE_TOKENS = 16;
/** Pages each big enough to be hashed off the thread on its own. */
const POOL = { numPages: 4, pageTokens: PAGE_TOKENS, pageBytes: OFF_THREAD_MIN_BYTES };
const NUM_PAGES = 2;

function pageBytes(index: number, fill: number): Uint8Array {
    const bytes = new Uint8Array(POOL.pageBytes);
    for (let offset = 0; offset < bytes.length; offset += 4096) {
        bytes[offset] = fill + index;
        bytes[offset + 1] = offset % 251;
    }
    return bytes;
}

/** Writes every page, beginning each one's seal as soon as it is written, as PageTransfer does; settles once every page is hashed. */
async function writeAndBegin(pool: PagePool, holder: string, fill: number, workspace = alice): Promise<Reservation> {
    const reservation = pool.reserve({ workspace, holder: req(holder), numPages: NUM_PAGES, firstToken: 0 });
    const begun = reservation.pages.map((handle, index) => {
        writeThrough(pool, handle, pageBytes(index, fill));
        return pool.beginSeal(handle.pageId, handle.generation);
    });
    expect(await Promise.all(begun)).toEqual(Array(NUM_PAGES).fill(true));
    return reservation;
}

const toSeal = (reservation: Reservation) => reservation.pages.map((handle) => ({ pageId: handle.pageId, numTokens: PAGE_TOKENS }));
const expectedChecksums = (fill: number) =>
    Array.from({ length: NUM_PAGES }, (_, index) => pageChecksum(pageBytes(index, fill), index * PAGE_TOKENS));

/** `verifyPages` of every page of the reservation, as the reader of a handoff verifies them. */
const verifyAll = (pool: PagePool, reservation: Reservation) =>
    pool.verifyPages(
        reservation.pages.map((handle) => handle.pageId),
        reservation.generation
    );

describe("PagePool seals begun as each page is finished", () => {
    it("seals with the checksums seal() computes, which verify", async () => {
        const pool = makePool(POOL);
        const reservation = await writeAndBegin(pool, "r1", 1);
        const sealed = await pool.sealPages(toSeal(reservation), reservation.generation);
        expect(sealed).toEqual({ ok: true, checksums: expectedChecksums(1) });
        expect((await verifyAll(pool, reservation)).ok).toBe(true);
        expect(pool.release(reservation).ok).toBe(true);
        await expectNoLeaksOnceZeroed(pool);
    });

    it("takes the checksum begun when the writer finished: a byte changed after it, as a bad transport would, fails verification", async () => {
        const pool = makePool(POOL);
        const reservation = await writeAndBegin(pool, "r1", 1);
        pool.injectByteFlip(reservation.pages[1]!.pageId, reservation.generation, 4096);
        const sealed = await pool.sealPages(toSeal(reservation), reservation.generation);
        expect(sealed).toEqual({ ok: true, checksums: expectedChecksums(1) });

        const verified = await verifyAll(pool, reservation);
        expect(verified.ok ? undefined : verified.index).toBe(1);
        expect(verified.ok ? undefined : verified.error).toBeInstanceOf(ChecksumMismatchError);
        expect(pool.release(reservation).ok).toBe(true);
        await expectNoLeaksOnceZeroed(pool);
    });

    it("hashes anew a page written again after its seal was begun", async () => {
        const pool = makePool(POOL);
        const reservation = await writeAndBegin(pool, "r1", 1);
        writeThrough(pool, reservation.pages[0]!, pageBytes(0, 9)); // a new write lease: the begun checksum describes older bytes
        const sealed = await pool.sealPages(toSeal(reservation), reservation.generation);
        expect(sealed).toEqual({ ok: true, checksums: [pageChecksum(pageBytes(0, 9), 0), expectedChecksums(1)[1]] });
        expect((await verifyAll(pool, reservation)).ok).toBe(true);
        expect(pool.release(reservation).ok).toBe(true);
        await expectNoLeaksOnceZeroed(pool);
    });

    it("never gives one holder's begun checksum to the next holder of the same pages", async () => {
        const pool = makePool({ ...POOL, numPages: NUM_PAGES });
        const first = await writeAndBegin(pool, "r1", 1);
        expect(pool.release(first).ok).toBe(true); // cancelled before its seal: the pages are scrubbed and free again
        await pool.whenZeroed();
        const second = pool.reserve({ workspace: bob, holder: req("r2"), numPages: NUM_PAGES, firstToken: 0 });
        expect(second.pages.map((handle) => handle.pageId).sort()).toEqual(first.pages.map((handle) => handle.pageId).sort());
        second.pages.forEach((handle, index) => writeThrough(pool, handle, pageBytes(index, 5)));

        const refused = await pool.sealPages(toSeal(first), first.generation);
        expect(refused.ok ? undefined : refused.error).toBeInstanceOf(StaleGenerationError);
        const sealed = await pool.sealPages(toSeal(second), second.generation);
        expect(sealed).toEqual({ ok: true, checksums: expectedChecksums(5) });
        expect(pool.release(second).ok).toBe(true);
        await expectNoLeaksOnceZeroed(pool);
    });

    it("begins nothing for a page its writer still holds, and throws the pool's DisposedError once disposed", async () => {
        const pool = makePool(POOL);
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: NUM_PAGES, firstToken: 0 });
        const leased = pool.acquireWriteLease(reservation.pages[0]!.pageId, reservation.generation);
        if (!leased.ok) {
            throw leased.error;
        }
        expect(leased.lease.write(0, pageBytes(0, 1)).ok).toBe(true);
        expect(await pool.beginSeal(reservation.pages[0]!.pageId, reservation.generation)).toBe(false); // still leased
        expect(leased.lease.write(0, pageBytes(0, 3)).ok).toBe(true);
        leased.lease.release();
        writeThrough(pool, reservation.pages[1]!, pageBytes(1, 1));
        const sealed = await pool.sealPages(toSeal(reservation), reservation.generation);
        expect(sealed).toEqual({ ok: true, checksums: [pageChecksum(pageBytes(0, 3), 0), expectedChecksums(1)[1]] });
        expect(pool.release(reservation).ok).toBe(true);
        await expectNoLeaksOnceZeroed(pool);

        const again = makePool(POOL);
        const begun = await writeAndBegin(again, "r2", 1);
        again.dispose();
        expect(() => again.beginSeal(begun.pages[0]!.pageId, begun.generation)).toThrow(DisposedError);
        await expect(again.sealPages(toSeal(begun), begun.generation)).rejects.toBeInstanceOf(DisposedError);
    });

    it("takes the checksum its writer computed while writing (beginSealWith), never hashing the page again, where the page is as it was hashed", async () => {
        const pool = makePool(POOL);
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: NUM_PAGES, firstToken: 0 });
        reservation.pages.forEach((handle, index) => writeThrough(pool, handle, pageBytes(index, 1)));
        const [first, second] = reservation.pages;
        // the first page's checksum as its writer gives it (here one that is not its bytes', so the test can tell whose the seal took)
        const given = 0x1234_5678_9abc_def0n;
        expect(
            pool.beginSealWith(first!.pageId, reservation.generation, { numBytes: POOL.pageBytes, tokenStart: 0, checksum: given })
        ).toBe(true);
        // the second's refused: another length, then another first token than the page holds; the seal hashes it
        expect(
            pool.beginSealWith(second!.pageId, reservation.generation, {
                numBytes: POOL.pageBytes - 1,
                tokenStart: PAGE_TOKENS,
                checksum: 1n
            })
        ).toBe(false);
        expect(pool.beginSealWith(second!.pageId, reservation.generation, { numBytes: POOL.pageBytes, tokenStart: 0, checksum: 1n })).toBe(
            false
        );
        expect(
            pool.beginSealWith(second!.pageId, reservation.generation + 1, {
                numBytes: POOL.pageBytes,
                tokenStart: PAGE_TOKENS,
                checksum: 1n
            })
        ).toBe(false);
        const sealed = await pool.sealPages(toSeal(reservation), reservation.generation);
        expect(sealed).toEqual({ ok: true, checksums: [given, expectedChecksums(1)[1]] });
        // the reader recomputes: a writer's checksum that is not its page's fails there
        const verified = await verifyAll(pool, reservation);
        expect(verified.ok ? undefined : verified.index).toBe(0);
        expect(verified.ok ? undefined : verified.error).toBeInstanceOf(ChecksumMismatchError);
        expect(pool.release(reservation).ok).toBe(true);
        await expectNoLeaksOnceZeroed(pool);
    });

    it("records no writer's checksum for a page still leased for writing, or written again since", async () => {
        const pool = makePool(POOL);
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: NUM_PAGES, firstToken: 0 });
        const leased = pool.acquireWriteLease(reservation.pages[0]!.pageId, reservation.generation);
        if (!leased.ok) {
            throw leased.error;
        }
        expect(leased.lease.write(0, pageBytes(0, 1)).ok).toBe(true);
        const hashed = { numBytes: POOL.pageBytes, tokenStart: 0, checksum: pageChecksum(pageBytes(0, 1), 0) };
        expect(pool.beginSealWith(reservation.pages[0]!.pageId, reservation.generation, hashed)).toBe(false);
        leased.lease.release();
        expect(pool.beginSealWith(reservation.pages[0]!.pageId, reservation.generation, hashed)).toBe(true);
        writeThrough(pool, reservation.pages[0]!, pageBytes(0, 7)); // a new write: the writer's checksum is forgotten
        writeThrough(pool, reservation.pages[1]!, pageBytes(1, 1));
        const sealed = await pool.sealPages(toSeal(reservation), reservation.generation);
        expect(sealed).toEqual({ ok: true, checksums: [pageChecksum(pageBytes(0, 7), 0), expectedChecksums(1)[1]] });
        expect((await verifyAll(pool, reservation)).ok).toBe(true);
        expect(pool.release(reservation).ok).toBe(true);
        await expectNoLeaksOnceZeroed(pool);
    });
});
