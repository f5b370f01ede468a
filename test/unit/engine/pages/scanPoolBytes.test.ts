import { describe, expect, it } from "vitest";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import { pagesPerClockRead } from "../../../../engine/pages/scanPoolBytes.js";
import { skippingScrubber } from "../../../../engine/drills/leakyPolicies.js";
import { alice, expectNoLeaks, makePool, pattern, req, writeAndSeal, writeThrough } from "./pagePoolFixtures.js";

// The byte scans run in slices that yield to the event loop (scanPoolBytes), so the pool can
// change between two slices: here it does, on purpose, and the scan must neither miss a dirty
// free page nor report a page that merely changed.

describe("the sliced byte scan", () => {
    it("finds a dirty free page in a pool of more than 256 MiB, in many short slices", async () => {
        // 65,536 pages of 4,160 bytes: 260 MiB, past the size whose audits used to skip the byte scans.
        const pool = new PagePool({ numPages: 65_536, pageTokens: 16, pageBytes: 4_160 }, { scrubber: skippingScrubber });
        try {
            const reservation = pool.reserve({ workspace: alice, holder: req("a"), numPages: 2, firstToken: 0 });
            for (const handle of reservation.pages) {
                writeAndSeal(pool, handle, pattern(100, 0x5a));
            }
            pool.release(reservation); // freed without being zeroed: the fault this pool was built with
            expect(pool.audit().ok).toBe(true); // the metadata alone cannot see it

            const scan = await pool.scanBytes({ sliceBudgetMs: 1 });
            expect(scan).toMatchObject({
                ok: false,
                numViolations: 2,
                numFreePagesScanned: 65_536,
                numPagesChangedDuringScan: 0,
                aborted: false
            });
            expect(scan.violations.map((violation) => [violation.invariant, violation.pageId])).toEqual([
                ["I6", 0],
                ["I6", 1]
            ]);
            expect(scan.violations[0]!.message).toBe("free page 0 (arena bytes [0, 4160)) is not all zero");
            expect(scan.numSlices).toBeGreaterThan(1);
        } finally {
            pool.dispose();
        }
    });

    it("skips pages that change between the scan's start and their slice, and reports none of them", async () => {
        const pool = makePool({ numPages: 64, pageTokens: 4, pageBytes: 64 });
        const sealed = pool.reserve({ workspace: alice, holder: req("sealed"), numPages: 40, firstToken: 0 }); // pages 0–39
        for (const handle of sealed.pages) {
            writeAndSeal(pool, handle, pattern(64, 0x11));
        }

        const scanning = pool.scanBytes({ maxPagesPerSlice: 4 }); // its first slice (pages 0–3) runs before it returns
        // Pages 40–47 were free when the scan began; now they hold another request's bytes. A scan
        // that judged them by their state at its start would report 8 dirty free pages.
        const later = pool.reserve({ workspace: alice, holder: req("later"), numPages: 8, firstToken: 0 });
        expect(later.pages.map((handle) => handle.pageId)).toEqual([40, 41, 42, 43, 44, 45, 46, 47]);
        for (const handle of later.pages) {
            writeThrough(pool, handle, pattern(64, 0x22));
        }
        pool.release(sealed); // pages 4–39 were sealed at the start; now scrubbed and free

        const scan = await scanning;
        expect(scan).toMatchObject({
            ok: true,
            numViolations: 0,
            numSealedPagesVerified: 4,
            numFreePagesScanned: 16,
            numPagesChangedDuringScan: 8 + 36
        });
        pool.release(later);
        expectNoLeaks(pool);
    });

    it("still finds a sealed page whose bytes changed, in a slice after the pool moved on", async () => {
        const pool = makePool({ numPages: 16, pageTokens: 4, pageBytes: 64 });
        const reservation = pool.reserve({ workspace: alice, holder: req("r"), numPages: 12, firstToken: 0 });
        for (const handle of reservation.pages) {
            writeAndSeal(pool, handle, pattern(64, 0x33));
        }
        const scanning = pool.scanBytes({ maxPagesPerSlice: 2 }); // pages 0–1 scanned; the rest after a yield
        pool.injectByteFlip(reservation.pages[9]!.pageId, reservation.generation, 5);
        const scan = await scanning;
        expect(scan).toMatchObject({
            ok: false,
            numViolations: 1,
            numSealedPagesVerified: 12,
            numFreePagesScanned: 4,
            numPagesChangedDuringScan: 0
        });
        expect(scan.violations[0]).toMatchObject({ invariant: "I7", pageId: 9 });
        pool.release(reservation);
        expectNoLeaks(pool);
    });

    it("ends early, without throwing, when the pool is disposed under it", async () => {
        const pool = makePool({ numPages: 32, pageTokens: 4, pageBytes: 64 });
        const scanning = pool.scanBytes({ maxPagesPerSlice: 1 }); // page 0 scanned; the rest after a yield
        pool.dispose();
        const scan = await scanning;
        expect(scan.aborted).toBe(true);
        expect(scan.numFreePagesScanned).toBe(1);
        await expect(Promise.resolve().then(() => pool.scanBytes())).rejects.toMatchObject({ code: "pool_disposed" });
    });

    it("reads the clock after every page of megabytes, so a slice is never several such pages past its budget", async () => {
        // Pages of megabytes, as a real model's 256-token pages are (docs/measurements.md has serve's). With no
        // time budget every clock read ends a slice, so the slices count the clock reads.
        const pool = makePool({ numPages: 12, pageTokens: 256, pageBytes: 3 * 1024 * 1024 });
        const scan = await pool.scanBytes({ sliceBudgetMs: 0 });
        expect(scan).toMatchObject({ ok: true, numFreePagesScanned: 12, numSlices: 12, aborted: false });
        expect(pagesPerClockRead(3 * 1024 * 1024)).toBe(1);
        // small pages still read it every few dozen pages: 4,160 bytes a page, 63 pages a read
        expect(pagesPerClockRead(4_160)).toBe(63);
        pool.dispose();
    });
});
