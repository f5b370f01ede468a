import { describe, expect, it } from "vitest";
import { PageStateError } from "../../../../engine/pages/pageErrors.js";
import { PageState } from "../../../../engine/pages/PageState.js";
import { alice, bob, expectNoLeaks, makePool, readThrough, req } from "./pagePoolFixtures.js";

// A write lease lends its page's bytes to a writer off the engine's thread (llama.cpp saving a
// state straight into the pages): the bytes count as written only once recorded, a page released
// meanwhile refuses the record, and what was written into it is zeroed before anyone else gets it.

function leaseOn(pool: ReturnType<typeof makePool>, holder: string) {
    const reservation = pool.reserve({ workspace: alice, holder: req(holder), numPages: 1, firstToken: 0 });
    const handle = reservation.pages[0]!;
    const leased = pool.acquireWriteLease(handle.pageId, handle.generation);
    if (!leased.ok) {
        throw leased.error;
    }
    return { reservation, handle, lease: leased.lease };
}

describe("a write lease's target", () => {
    it("is the page's bytes themselves, counted as written only once recorded, then sealed and read like any write", () => {
        const pool = makePool();
        const { reservation, handle, lease } = leaseOn(pool, "r1");
        const targeted = lease.target(8, 16);
        if (!targeted.ok) {
            throw targeted.error;
        }
        targeted.bytes.fill(5);
        expect(pool.pageInfo(handle.pageId).state).toBe(PageState.Reserved);
        expect(pool.pageInfo(handle.pageId).numValidBytes).toBe(0);

        const recorded = lease.recordWritten(24);
        expect(recorded).toEqual({ ok: true, numValidBytes: 24 });
        expect(pool.pageInfo(handle.pageId).state).toBe(PageState.Written);
        lease.release();
        const sealed = pool.seal(handle.pageId, handle.generation, 4);
        expect(sealed.ok).toBe(true);
        expect(Array.from(readThrough(pool, handle))).toEqual([...new Array<number>(8).fill(0), ...new Array<number>(16).fill(5)]);
        pool.release(reservation);
        expectNoLeaks(pool);
    });

    it("refuses a target past the page, with the numbers", () => {
        const pool = makePool();
        const { reservation, lease } = leaseOn(pool, "r1");
        expect(() => lease.target(60, 8)).toThrow(/write target \[60, 68\) of page \d+ ends past its 64 bytes/);
        expect(() => lease.recordWritten(65)).toThrow(/65 bytes recorded as written on page \d+ of 64 bytes/);
        expect(pool.counters.outOfBoundsRefused).toBe(2);
        lease.release();
        pool.release(reservation);
        expectNoLeaks(pool);
    });

    it("after the owner released the page: refuses the record and the next target, keeps the page from reuse while leased, and zeroes what was written", () => {
        const pool = makePool({ numPages: 1, pageTokens: 4, pageBytes: 64 });
        const { reservation, handle, lease } = leaseOn(pool, "cancelled");
        const targeted = lease.target(0, 64);
        if (!targeted.ok) {
            throw targeted.error;
        }
        targeted.bytes.fill(7); // the writer runs on while the request is cancelled
        pool.release(reservation);
        expect(pool.pageInfo(handle.pageId).state).toBe(PageState.Quarantined);
        expect(pool.canReserve(1)).toBe(false); // the lease keeps the page quarantined: nobody else gets it while written to

        const recorded = lease.recordWritten(64);
        expect(recorded.ok).toBe(false);
        expect(!recorded.ok && recorded.error).toBeInstanceOf(PageStateError);
        expect(!recorded.ok && recorded.error.message).toMatch(
            /^Refused write on page \d+ at generation \d+: the page is quarantined \(page_released\)\.$/
        );
        const again = lease.target(0, 8);
        expect(again.ok).toBe(false);
        expect(pool.counters.staleWritesRefused).toBe(2);

        lease.release(); // the writer is done: the page is scrubbed and freed
        expect(pool.pageInfo(handle.pageId).state).toBe(PageState.Free);
        expect(Array.from(pool.inspectRawPage(handle.pageId)).every((byte) => byte === 0)).toBe(true);
        const next = pool.reserve({ workspace: bob, holder: req("next"), numPages: 1, firstToken: 0 });
        expect(next.pages[0]!.pageId).toBe(handle.pageId);
        pool.release(next);
        expectNoLeaks(pool);
    });
});
