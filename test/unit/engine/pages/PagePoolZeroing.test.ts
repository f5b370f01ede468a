import { describe, expect, it } from "vitest";
import type { MemoryEventInput } from "../../../../engine/audit/MemoryEventLog.js";
import { skippingScrubber } from "../../../../engine/drills/leakyPolicies.js";
import { OFF_THREAD_MIN_BYTES } from "../../../../engine/pages/PageHasher.js";
import { PagePool } from "../../../../engine/pages/PagePool.js";
import { zeroingScrubber } from "../../../../engine/pages/PageScrubber.js";
import { PageState } from "../../../../engine/pages/PageState.js";
import { assertAuditClean } from "../../../support/assertAuditClean.js";
import { alice, expectNoLeaks, req, writeThrough } from "./pagePoolFixtures.js";

// Released pages of 1 MiB or more are zeroed on the page threads where they run, so a long
// prompt's release does not hold the engine's thread: the pages stay quarantined (nobody can take
// them) until the threads are done, and only then go free, all zero.

const POOL = { numPages: 4, pageTokens: 16, pageBytes: OFF_THREAD_MIN_BYTES };

function written(pool: PagePool, holder: string, numPages = 2) {
    const reservation = pool.reserve({ workspace: alice, holder: req(holder), numPages, firstToken: 0 });
    for (const handle of reservation.pages) {
        writeThrough(pool, handle, new Uint8Array(POOL.pageBytes).fill(7));
    }
    return reservation;
}

describe("PagePool's release of big pages, with its page threads running", () => {
    it("zeroes them on the threads: quarantined and marked meanwhile, the audit clean, then free and all zero, counted, logged and announced", async () => {
        const events: MemoryEventInput[] = [];
        const pool = new PagePool(POOL, {}, { record: (event) => events.push(event) });
        await pool.startHashingThreads();
        let numFreedCalls = 0;
        pool.watchFreedPages(() => numFreedCalls++);
        const reservation = written(pool, "r1");

        const released = pool.release(reservation);
        expect(released).toEqual({ ok: true, numPagesScrubbed: 0, numPagesQuarantined: 2 });
        expect(pool.numPagesZeroing).toBe(2);
        expect(pool.numFreePages).toBe(2);
        expect(reservation.pages.map((handle) => pool.pageInfo(handle.pageId).state)).toEqual([
            PageState.Quarantined,
            PageState.Quarantined
        ]);
        expect(pool.canReserve(3)).toBe(false); // nobody gets a page before it is zero
        assertAuditClean(pool.audit()); // a drained quarantined page being zeroed is not one left behind (I3)
        expect(events.find((event) => event.kind === "released")?.detail).toBe(
            "2 pages: 0 scrubbed now, 2 being zeroed off the engine's thread, 0 wait for their leases"
        );
        expect(numFreedCalls).toBe(0);

        await pool.whenZeroed();
        expect(pool.numPagesZeroing).toBe(0);
        expect(pool.counters.pagesScrubbed).toBe(2);
        expect(numFreedCalls).toBe(1);
        expect(events.at(-1)).toMatchObject({ kind: "scrubbed", workspace: alice, requestId: req("r1"), pageState: "free" });
        expectNoLeaks(pool); // every page free, and the scan finds each all zero
    });

    it("zeroes a page whose last lease ends after the release on the threads too", async () => {
        const pool = new PagePool(POOL);
        await pool.startHashingThreads();
        const reservation = written(pool, "r1", 1);
        const handle = reservation.pages[0]!;
        const sealed = pool.seal(handle.pageId, handle.generation, 16);
        expect(sealed.ok).toBe(true);
        const leased = pool.acquireReadLease(handle.pageId, handle.generation);
        if (!leased.ok) {
            throw leased.error;
        }
        expect(pool.release(reservation)).toEqual({ ok: true, numPagesScrubbed: 0, numPagesQuarantined: 1 });
        expect(pool.numPagesZeroing).toBe(0); // a reader still holds it
        leased.lease.release();
        expect(pool.numPagesZeroing).toBe(1);
        await pool.whenZeroed();
        expectNoLeaks(pool);
    });

    it("disposed while zeroing: the wait settles and the late answer changes nothing", async () => {
        const pool = new PagePool(POOL);
        await pool.startHashingThreads();
        pool.release(written(pool, "r1"));
        const zeroed = pool.whenZeroed();
        pool.dispose();
        await zeroed;
        await new Promise((resolve) => setTimeout(resolve, 50)); // room for a thread's late answer
        expect(pool.isDisposed).toBe(true);
        expect(pool.counters.pagesScrubbed).toBe(0); // the late answer freed nothing
        expect(pool.numPagesZeroing).toBe(2);
    });

    it("zeroes the pages here when the threads cannot, before they go free", async () => {
        const failing = { scrub: zeroingScrubber.scrub, scrubOffThread: () => Promise.reject(new Error("a page thread died")) };
        const pool = new PagePool(POOL, { scrubber: failing });
        await pool.startHashingThreads();
        const reservation = written(pool, "r1");
        expect(pool.release(reservation)).toEqual({ ok: true, numPagesScrubbed: 0, numPagesQuarantined: 2 });
        await pool.whenZeroed();
        expect(pool.counters.pagesScrubbed).toBe(2);
        expectNoLeaks(pool); // free, and the scan finds each all zero
    });

    it("zeroes in the release itself when asked to (a swap-out making room needs the pages at once)", async () => {
        const pool = new PagePool(POOL);
        await pool.startHashingThreads();
        expect(pool.release(written(pool, "r1"), { zeroNow: true })).toEqual({ ok: true, numPagesScrubbed: 2, numPagesQuarantined: 0 });
        expect(pool.numPagesZeroing).toBe(0);
        expectNoLeaks(pool);
    });
});

describe("PagePool's release zeroes in the call, as before", () => {
    it("where its page threads are not running", () => {
        const pool = new PagePool(POOL);
        expect(pool.release(written(pool, "r1"))).toEqual({ ok: true, numPagesScrubbed: 2, numPagesQuarantined: 0 });
        expect(pool.numPagesZeroing).toBe(0);
        expectNoLeaks(pool);
    });

    it("where a drill's scrubber, which does not zero, is the pool's", async () => {
        const pool = new PagePool(POOL, { scrubber: skippingScrubber });
        await pool.startHashingThreads();
        const reservation = written(pool, "r1");
        expect(pool.release(reservation)).toEqual({ ok: true, numPagesScrubbed: 2, numPagesQuarantined: 0 });
        expect(pool.numPagesZeroing).toBe(0);
        expect(pool.counters.pagesScrubbed).toBe(0);
        const leftover = pool.inspectRawPage(reservation.pages[0]!.pageId);
        expect(leftover[0]).toBe(7); // the skipped scrub's leak, as the drill shows it
        pool.dispose();
    });
});
