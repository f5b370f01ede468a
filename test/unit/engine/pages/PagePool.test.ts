import { describe, expect, it } from "vitest";
import { InvariantError } from "../../../../engine/core/invariant.js";
import { assertAuditClean } from "../../../support/assertAuditClean.js";
import { PageState } from "../../../../engine/pages/PageState.js";
import { alice, bob, expectNoLeaks, makePool, pattern, readThrough, req, writeAndSeal, writeThrough } from "./pagePoolFixtures.js";

describe("PagePool reservation", () => {
    it("takes all requested pages or none, and a shortage is a bug the caller should have asked about", () => {
        const pool = makePool();
        expect(pool.canReserve(9)).toBe(false);
        expect(() => pool.reserve({ workspace: alice, holder: req("r1"), numPages: 9, firstToken: 0 })).toThrow(
            /reserve of 9 pages for r1 with 8 free/
        );
        expect(pool.numFreePages).toBe(8);
        assertAuditClean(pool.audit({ scanFreePages: true }));

        // Three pages, one generation, contiguous token ranges [10, 14), [14, 18), [18, 22).
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 3, firstToken: 10 });
        expect(reservation.pages).toHaveLength(3);
        expect(new Set(reservation.pages.map((handle) => handle.pageId)).size).toBe(3);
        expect(reservation.pages.every((handle) => handle.generation === reservation.generation)).toBe(true);
        expect(reservation.pages.map((handle) => pool.pageInfo(handle.pageId).tokenStart)).toEqual([10, 14, 18]);
        expect(reservation.pages.map((handle) => pool.pageInfo(handle.pageId).tokenEnd)).toEqual([14, 18, 22]);
        expect(pool.numFreePages).toBe(5);
        expect(pool.canReserve(5)).toBe(true);
        expect(pool.canReserve(6)).toBe(false);
        assertAuditClean(pool.audit({ scanFreePages: true }));

        expect(pool.release(reservation).ok).toBe(true);
        expectNoLeaks(pool);
    });

    it("canReserve has no side effect", () => {
        const pool = makePool();
        const held = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 2, firstToken: 0 });
        const before = { snapshot: pool.snapshot(), counters: pool.counters, numFree: pool.numFreePages };
        for (let numPages = 0; numPages <= 10; numPages++) {
            pool.canReserve(numPages);
        }
        expect({ snapshot: pool.snapshot(), counters: pool.counters, numFree: pool.numFreePages }).toEqual(before);

        pool.release(held);
        expectNoLeaks(pool);
    });

    it("refuses a second reservation for a request that holds one", () => {
        const pool = makePool();
        const held = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 0 });
        expect(() => pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 4 })).toThrow(
            /r1 reserves 1 pages while holding 1 at generation 1/
        );
        expect(pool.numFreePages).toBe(7);

        pool.release(held);
        expectNoLeaks(pool);
    });
});

describe("PagePool writes and reads", () => {
    it("bounds writes by pageBytes and reads by the valid length the owner wrote", () => {
        const pool = makePool();
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 0 });
        const [page] = reservation.pages;
        if (page === undefined) {
            throw new Error("reservation of 1 page returned none");
        }
        const writer = pool.acquireWriteLease(page.pageId, page.generation);
        if (!writer.ok) {
            throw writer.error;
        }

        // The last byte of the page is in bounds; one past it is refused, with the numbers, and changes nothing.
        expect(writer.lease.write(63, pattern(1, 0x33))).toEqual({ ok: true, numValidBytes: 64 });
        expect(() => writer.lease.write(63, pattern(2, 0x44))).toThrow(
            /write of 2 bytes at offset 63 of page 0 ends at 65, past its 64 bytes/
        );
        expect(() => writer.lease.write(-1, pattern(1, 0x44))).toThrow(InvariantError);
        expect(pool.counters.outOfBoundsRefused).toBe(2);
        writer.lease.release();
        pool.release(reservation);

        // A second request writes 10 bytes; readers see those 10 and can never reach byte 10.
        const second = pool.reserve({ workspace: bob, holder: req("r2"), numPages: 1, firstToken: 0 });
        const [shortPage] = second.pages;
        if (shortPage === undefined) {
            throw new Error("reservation of 1 page returned none");
        }
        writeAndSeal(pool, shortPage, pattern(10, 0x55), 1);
        const reader = pool.acquireReadLease(shortPage.pageId, shortPage.generation);
        if (!reader.ok) {
            throw reader.error;
        }
        expect(reader.lease.numValidBytes).toBe(10);
        expect(reader.lease.read()).toEqual(pattern(10, 0x55));
        expect(reader.lease.read(9, 1)).toEqual(pattern(1, 0x55));
        expect(reader.lease.read(10)).toEqual(new Uint8Array(0));
        expect(() => reader.lease.read(0, 11)).toThrow(/read of bytes \[0, 11\) of page 0 at generation 2, past its 10 valid bytes/);
        expect(() => reader.lease.read(11)).toThrow(InvariantError);
        expect(pool.counters.outOfBoundsRefused).toBe(4);
        reader.lease.release();

        pool.release(second);
        expectNoLeaks(pool);
    });

    it("refuses a read lease before the page is sealed, and writes after it is", () => {
        const pool = makePool();
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 0 });
        const [page] = reservation.pages;
        if (page === undefined) {
            throw new Error("reservation of 1 page returned none");
        }

        const early = pool.acquireReadLease(page.pageId, page.generation);
        expect(early.ok || early.error.code).toBe("page_not_sealed");
        writeThrough(pool, page, pattern(8, 0x11));
        expect(pool.pageInfo(page.pageId).state).toBe(PageState.Written);
        expect(pool.acquireReadLease(page.pageId, page.generation).ok).toBe(false);
        expect(pool.counters.readsBeforeSealRefused).toBe(2);

        expect(pool.seal(page.pageId, page.generation).ok).toBe(true);
        const late = pool.acquireWriteLease(page.pageId, page.generation);
        expect(late.ok || late.error.code).toBe("page_already_sealed");
        const again = pool.seal(page.pageId, page.generation);
        expect(again.ok || again.error.code).toBe("page_already_sealed");
        expect(pool.counters.writesAfterSealRefused).toBe(2);

        pool.release(reservation);
        expectNoLeaks(pool);
    });

    it("treats sealing an unwritten page, sealing under a writer and a second writer as bugs", () => {
        const pool = makePool();
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 0 });
        const [page] = reservation.pages;
        if (page === undefined) {
            throw new Error("reservation of 1 page returned none");
        }

        expect(() => pool.seal(page.pageId, page.generation)).toThrow(
            /seal of page 0 at generation 1, which is reserved with 0 bytes written/
        );
        const writer = pool.acquireWriteLease(page.pageId, page.generation);
        if (!writer.ok) {
            throw writer.error;
        }
        writer.lease.write(0, pattern(4, 0x22));
        expect(() => pool.acquireWriteLease(page.pageId, page.generation)).toThrow(/second writer on page 0 at generation 1/);
        expect(() => pool.seal(page.pageId, page.generation)).toThrow(/while its writer still holds a lease/);
        expect(() => pool.seal(page.pageId, page.generation, 5)).toThrow(InvariantError);

        // release() is idempotent; writing through a released lease is a bug.
        writer.lease.release();
        writer.lease.release();
        expect(pool.numActiveLeases).toBe(0);
        expect(() => writer.lease.write(0, pattern(1, 0x22))).toThrow(/write through a released write lease on page 0 at generation 1/);

        pool.release(reservation);
        expectNoLeaks(pool);
    });
});

describe("PagePool checksums", () => {
    it("seals with a checksum that verify recomputes, and catches a byte flipped after sealing", () => {
        const pool = makePool();
        const reservation = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 2, firstToken: 0 });
        const [first, second] = reservation.pages;
        if (first === undefined || second === undefined) {
            throw new Error("reservation of 2 pages returned fewer");
        }

        // The same bytes at token 0 and token 4 hash differently: the checksum binds the position.
        const firstChecksum = writeAndSeal(pool, first, pattern(32, 0x5a));
        const secondChecksum = writeAndSeal(pool, second, pattern(32, 0x5a), 3);
        expect(firstChecksum).not.toBe(secondChecksum);
        expect(pool.pageInfo(second.pageId)).toMatchObject({ tokenStart: 4, tokenEnd: 7, checksum: secondChecksum });
        expect(pool.verify(first.pageId, first.generation)).toEqual({ ok: true, checksum: firstChecksum });

        pool.injectByteFlip(first.pageId, first.generation, 31);
        const verified = pool.verify(first.pageId, first.generation);
        expect(verified.ok || verified.error.code).toBe("checksum_mismatch");
        expect(pool.counters.checksumFailures).toBe(1);
        expect(pool.counters.faultsInjected).toBe(1);
        const audit = pool.audit({ verifySealedPages: true });
        expect(audit.violations).toEqual([expect.objectContaining({ invariant: "I7", pageId: first.pageId })]);
        expect(pool.verify(second.pageId, second.generation).ok).toBe(true);

        pool.release(reservation);
        expectNoLeaks(pool);
    });
});

describe("PagePool release, quarantine and scrub", () => {
    it("keeps a released page quarantined while a reader holds it, then scrubs it to zero", () => {
        const pool = makePool();
        const first = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 0 });
        const [page] = first.pages;
        if (page === undefined) {
            throw new Error("reservation of 1 page returned none");
        }
        writeAndSeal(pool, page, pattern(64, 0xa1));
        const reader = pool.acquireReadLease(page.pageId, page.generation);
        if (!reader.ok) {
            throw reader.error;
        }

        // The producer cancels while the reader is mid-transfer (pages reused under a reader).
        expect(pool.release(first)).toEqual({ ok: true, numPagesScrubbed: 0, numPagesQuarantined: 1 });
        expect(pool.pageInfo(page.pageId)).toMatchObject({ state: PageState.Quarantined, numReadLeases: 1, workspace: alice });
        expect(pool.numFreePages).toBe(7);
        assertAuditClean(pool.audit({ scanFreePages: true }));

        // Every other page goes to Bob; the quarantined page is not among them, and is not zeroed yet.
        const second = pool.reserve({ workspace: bob, holder: req("r2"), numPages: 7, firstToken: 0 });
        expect(second.pages.map((handle) => handle.pageId)).not.toContain(page.pageId);
        expect(pool.canReserve(1)).toBe(false);
        expect(reader.lease.read()).toEqual(pattern(64, 0xa1));
        const lateReader = pool.acquireReadLease(page.pageId, page.generation);
        expect(lateReader.ok || lateReader.error.code).toBe("page_released");

        // The reader lets go: scrubbed, free, zero.
        reader.lease.release();
        expect(pool.pageInfo(page.pageId)).toMatchObject({ state: PageState.Free, numValidBytes: 0 });
        expect(pool.counters.pagesScrubbed).toBe(1);
        expect(pool.canReserve(1)).toBe(true);
        assertAuditClean(pool.audit({ scanFreePages: true }));

        pool.release(second);
        expectNoLeaks(pool);
    });

    it("refuses a late write after cancel, and it never lands in the next owner's page (nor does a replayed completion)", () => {
        const pool = makePool({ numPages: 2, pageTokens: 4, pageBytes: 64 });
        const cancelled = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 0 });
        const [page] = cancelled.pages;
        if (page === undefined) {
            throw new Error("reservation of 1 page returned none");
        }
        const writer = pool.acquireWriteLease(page.pageId, page.generation);
        if (!writer.ok) {
            throw writer.error;
        }
        writer.lease.write(0, pattern(16, 0xee));

        // Cancel mid-transfer and admit Bob at once: he gets the other page.
        pool.release(cancelled);
        const next = pool.reserve({ workspace: bob, holder: req("r2"), numPages: 1, firstToken: 0 });
        expect(next.pages[0]?.pageId).not.toBe(page.pageId);
        const refused = writer.lease.write(16, pattern(16, 0xee));
        expect(refused.ok || refused.error.code).toBe("page_released");
        expect(pool.counters.staleWritesRefused).toBe(1);
        writer.lease.release();
        expect(pool.pageInfo(page.pageId).state).toBe(PageState.Free);

        // Bob's next request gets the scrubbed page; the old writer comes back with its old generation.
        const reused = pool.reserve({ workspace: bob, holder: req("r3"), numPages: 1, firstToken: 0 });
        const [reusedPage] = reused.pages;
        expect(reusedPage?.pageId).toBe(page.pageId);
        if (reusedPage === undefined) {
            throw new Error("reservation of 1 page returned none");
        }
        const stale = pool.acquireWriteLease(page.pageId, page.generation);
        expect(stale.ok || stale.error.code).toBe("stale_generation");
        expect(stale.ok || stale.error.message).toMatch(/handle has generation 1, the page is at generation 3/);
        expect(pool.counters.staleWritesRefused).toBe(2);

        // The new owner's page holds only what the new owner wrote.
        writeAndSeal(pool, reusedPage, pattern(8, 0x01));
        expect(readThrough(pool, reusedPage)).toEqual(pattern(8, 0x01));

        pool.release(next);
        pool.release(reused);
        expectNoLeaks(pool);
    });

    it("ignores replayed completions after reuse: stale seals, verifies and reads change nothing (replayed completion)", () => {
        const pool = makePool({ numPages: 1, pageTokens: 4, pageBytes: 64 });
        const old = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 1, firstToken: 0 });
        const [oldPage] = old.pages;
        if (oldPage === undefined) {
            throw new Error("reservation of 1 page returned none");
        }
        writeThrough(pool, oldPage, pattern(4, 0x10));
        pool.release(old);
        const stillFree = pool.seal(oldPage.pageId, oldPage.generation);
        expect(stillFree.ok || stillFree.error.message).toMatch(/the page is free/);

        const current = pool.reserve({ workspace: bob, holder: req("r2"), numPages: 1, firstToken: 0 });
        const [page] = current.pages;
        if (page === undefined) {
            throw new Error("reservation of 1 page returned none");
        }
        writeAndSeal(pool, page, pattern(4, 0x20));
        const before = { snapshot: pool.snapshot(), info: pool.pageInfo(page.pageId) };

        expect(pool.seal(oldPage.pageId, oldPage.generation).ok).toBe(false);
        expect(pool.verify(oldPage.pageId, oldPage.generation).ok).toBe(false);
        expect(pool.acquireReadLease(oldPage.pageId, oldPage.generation).ok).toBe(false);
        expect(pool.counters).toMatchObject({ staleSealsRefused: 3, staleReadsRefused: 1 });
        expect({ snapshot: pool.snapshot(), info: pool.pageInfo(page.pageId) }).toEqual(before);

        pool.release(current);
        expectNoLeaks(pool);
    });

    it("detects a double release, and a late release of an older reservation, without changing a page (double release)", () => {
        const pool = makePool();
        const first = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 2, firstToken: 0 });
        expect(pool.release(first)).toEqual({ ok: true, numPagesScrubbed: 2, numPagesQuarantined: 0 });
        const twice = pool.release(first);
        expect(twice.ok || twice.error.code).toBe("double_release");
        expect(twice.ok || twice.error.message).toMatch(/r1 released its pages at generation 1, but it holds no reservation/);

        // The same request reserves again; the error path replays the first release.
        const again = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 3, firstToken: 0 });
        const before = pool.snapshot();
        const late = pool.release(first);
        expect(late.ok || late.error.message).toMatch(/its current reservation is at generation 2/);
        expect(pool.counters.doubleReleasesDetected).toBe(2);
        expect(pool.snapshot()).toEqual(before);
        expect(pool.numFreePages).toBe(5);

        expect(pool.release(again).ok).toBe(true);
        expectNoLeaks(pool);
    });
});
