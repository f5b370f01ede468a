// The pool's snapshot, its disposal and its configuration.
import { describe, expect, it } from "vitest";
import { pageId } from "../../../../engine/core/ids.js";
import { DisposedError, PagePoolConfigError } from "../../../../engine/pages/pageErrors.js";
import { PageState } from "../../../../engine/pages/PageState.js";
import { alice, bob, expectNoLeaks, makePool, pattern, req, writeAndSeal } from "./pagePoolFixtures.js";

describe("PagePool snapshot and disposal", () => {
    it("snapshots states and owners compactly, quarantined pages still showing their workspace", () => {
        const pool = makePool({ numPages: 4, pageTokens: 4, pageBytes: 16 });
        const ofAlice = pool.reserve({ workspace: alice, holder: req("r1"), numPages: 2, firstToken: 0 });
        const ofBob = pool.reserve({ workspace: bob, holder: req("r2"), numPages: 1, firstToken: 0 });
        const [bobPage] = ofBob.pages;
        if (bobPage === undefined) {
            throw new Error("reservation of 1 page returned none");
        }
        writeAndSeal(pool, bobPage, pattern(16, 0x42));
        const reader = pool.acquireReadLease(bobPage.pageId, bobPage.generation);
        if (!reader.ok) {
            throw reader.error;
        }
        pool.release(ofBob);

        const snapshot = pool.snapshot();
        expect(Array.from(snapshot.states)).toEqual([PageState.Reserved, PageState.Reserved, PageState.Quarantined, PageState.Free]);
        expect(Array.from(snapshot.ownerSlots)).toEqual([1, 1, 2, 0]);
        expect(snapshot.workspaces).toEqual([alice, bob]);
        expect(snapshot.numPagesByState).toEqual([1, 2, 0, 0, 1]);
        expect(snapshot.numActiveLeases).toBe(1);

        reader.lease.release();
        pool.release(ofAlice);
        expectNoLeaks(pool);
    });

    it("disposes idempotently; afterwards calls throw DisposedError and leases release quietly", () => {
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

        pool.dispose();
        pool.dispose();
        expect(pool.isDisposed).toBe(true);
        expect(() => pool.canReserve(1)).toThrow(DisposedError);
        expect(() => pool.reserve({ workspace: alice, holder: req("r2"), numPages: 1, firstToken: 0 })).toThrow(/page pool was disposed/);
        expect(() => pool.release(reservation)).toThrow(DisposedError);
        expect(() => pool.audit()).toThrow(DisposedError);
        expect(() => pool.snapshot()).toThrow(DisposedError);
        expect(() => writer.lease.write(0, pattern(1, 1))).toThrow(DisposedError);
        try {
            pool.pageInfo(pageId(0));
        } catch (error) {
            expect(error).toBeInstanceOf(DisposedError);
            expect((error as DisposedError).code).toBe("pool_disposed");
        }
        expect(() => writer.lease.release()).not.toThrow();
    });
});

describe("PagePool config", () => {
    it("refuses unusable configs with the value and the limit", () => {
        expect(() => makePool({ numPages: 0, pageTokens: 4, pageBytes: 64 })).toThrow(/numPages must be a positive integer; got 0/);
        expect(() => makePool({ numPages: 4, pageTokens: 2.5, pageBytes: 64 })).toThrow(PagePoolConfigError);
        expect(() => makePool({ numPages: 65_536, pageTokens: 16, pageBytes: 65_536, maxArenaBytes: 1024 ** 3 })).toThrow(
            "The page pool needs 4,294,967,296 bytes (65,536 pages × 65,536 bytes), over the limit of 1,073,741,824 bytes."
        );

        const pool = makePool();
        expect(Object.isFrozen(pool.config)).toBe(true);
        expectNoLeaks(pool);
    });
});
