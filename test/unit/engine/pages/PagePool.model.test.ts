import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { requestId, workspaceId, type WorkspaceId } from "../../../../engine/core/ids.js";
import type { PageReadLease, PageWriteLease } from "../../../../engine/pages/PageLease.js";
import type { PagePool } from "../../../../engine/pages/PagePool.js";
import { assertAuditClean } from "../../../support/assertAuditClean.js";
import type { PageHandle, Reservation } from "../../../../engine/pages/Reservation.js";
import { expectNoLeaks, makePool } from "./pagePoolFixtures.js";

// Model-based test: random interleavings of reserve, write (short or held writers), seal,
// transfer (read lease begin/end), release (completion or cancel), replayed releases and stale
// writes, checked against a plain model after every step. Scrubbing happens inside the pool when
// the last lease of a released page drains; the model predicts when.

const NUM_PAGES = 6;
const PAGE_TOKENS = 4;
const PAGE_BYTES = 32;
const WORKSPACES: readonly WorkspaceId[] = [workspaceId("s0"), workspaceId("s1"), workspaceId("s2")];

interface ModelPage {
    readonly handle: PageHandle;
    /** What the owner wrote; zero elsewhere, as the scrubbed page was. */
    readonly bytes: Uint8Array;
    numValidBytes: number;
    sealed: boolean;
    hasWriter: boolean;
    numReaders: number;
}

interface ModelRequest {
    readonly reservation: Reservation;
    readonly pages: ModelPage[];
    /** Distinct per request, never 0, so a byte of one request can be told from another's or from zero. */
    readonly fill: number;
    released: boolean;
}

interface Model {
    readonly live: ModelRequest[];
    readonly released: ModelRequest[];
    readonly writers: { readonly lease: PageWriteLease; readonly page: ModelPage; readonly owner: ModelRequest }[];
    readonly readers: { readonly lease: PageReadLease; readonly page: ModelPage }[];
    numRequests: number;
    staleWritesRefused: number;
    doubleReleasesDetected: number;
    readsBeforeSealRefused: number;
}

type Op =
    | { readonly kind: "reserve"; readonly workspace: number; readonly numPages: number }
    | { readonly kind: "write"; readonly pick: number; readonly offset: number; readonly length: number; readonly hold: boolean }
    | { readonly kind: "heldWrite"; readonly pick: number; readonly offset: number; readonly length: number }
    | { readonly kind: "dropWriter"; readonly pick: number }
    | { readonly kind: "seal"; readonly pick: number; readonly numTokens: number }
    | { readonly kind: "beginTransfer"; readonly pick: number }
    | { readonly kind: "endTransfer"; readonly pick: number }
    | { readonly kind: "release"; readonly pick: number }
    | { readonly kind: "replayRelease"; readonly pick: number }
    | { readonly kind: "staleWrite"; readonly pick: number };

const pick = fc.nat({ max: 1000 });
const offset = fc.nat({ max: PAGE_BYTES - 1 });
const length = fc.integer({ min: 1, max: PAGE_BYTES });
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
        kind: fc.constant("reserve" as const),
        workspace: fc.nat({ max: WORKSPACES.length - 1 }),
        numPages: fc.integer({ min: 1, max: 4 })
    }),
    fc.record({ kind: fc.constant("write" as const), pick, offset, length, hold: fc.boolean() }),
    fc.record({ kind: fc.constant("heldWrite" as const), pick, offset, length }),
    fc.record({ kind: fc.constant("dropWriter" as const), pick }),
    fc.record({ kind: fc.constant("seal" as const), pick, numTokens: fc.integer({ min: 1, max: PAGE_TOKENS }) }),
    fc.record({ kind: fc.constant("beginTransfer" as const), pick }),
    fc.record({ kind: fc.constant("endTransfer" as const), pick }),
    fc.record({ kind: fc.constant("release" as const), pick }),
    fc.record({ kind: fc.constant("replayRelease" as const), pick }),
    fc.record({ kind: fc.constant("staleWrite" as const), pick })
);

function choose<T>(items: readonly T[], index: number): T | undefined {
    return items.length === 0 ? undefined : items[index % items.length];
}

const isLeased = (page: ModelPage): boolean => page.hasWriter || page.numReaders > 0;

function expectedNumFreePages(model: Model): number {
    const numLive = model.live.reduce((sum, request) => sum + request.pages.length, 0);
    const numQuarantined = model.released.reduce((sum, request) => sum + request.pages.filter(isLeased).length, 0);
    return NUM_PAGES - numLive - numQuarantined;
}

/** Writes `[offset, offset + length)` (clipped to the page) through `lease`, mirroring it in the model. */
function writeRange(lease: PageWriteLease, page: ModelPage, owner: ModelRequest, start: number, numBytes: number): void {
    const end = Math.min(PAGE_BYTES, start + numBytes);
    const bytes = new Uint8Array(end - start).map((_, index) => ((owner.fill + start + index) % 255) + 1);
    const written = lease.write(start, bytes);
    expect(written).toEqual({ ok: true, numValidBytes: Math.max(page.numValidBytes, end) });
    page.bytes.set(bytes, start);
    page.numValidBytes = Math.max(page.numValidBytes, end);
}

function apply(pool: PagePool, model: Model, op: Op): void {
    const livePages = model.live.flatMap((owner) => owner.pages.map((page) => ({ owner, page })));
    switch (op.kind) {
        case "reserve": {
            const fits = op.numPages <= expectedNumFreePages(model);
            expect(pool.canReserve(op.numPages)).toBe(fits);
            if (!fits) {
                return;
            }
            const serial = model.numRequests++;
            const reservation = pool.reserve({
                workspace: WORKSPACES[op.workspace] as WorkspaceId,
                holder: requestId(`r${serial}`),
                numPages: op.numPages,
                firstToken: 0
            });
            const pages = reservation.pages.map((handle) => ({
                handle,
                bytes: new Uint8Array(PAGE_BYTES),
                numValidBytes: 0,
                sealed: false,
                hasWriter: false,
                numReaders: 0
            }));
            model.live.push({ reservation, pages, fill: (serial * 37) % 251, released: false });
            return;
        }
        case "write": {
            const target = choose(
                livePages.filter(({ page }) => !page.sealed && !page.hasWriter),
                op.pick
            );
            if (target === undefined) {
                return;
            }
            const acquired = pool.acquireWriteLease(target.page.handle.pageId, target.page.handle.generation);
            if (!acquired.ok) {
                throw acquired.error;
            }
            writeRange(acquired.lease, target.page, target.owner, op.offset, op.length);
            if (op.hold) {
                target.page.hasWriter = true;
                model.writers.push({ lease: acquired.lease, page: target.page, owner: target.owner });
            } else {
                acquired.lease.release();
            }
            return;
        }
        case "heldWrite": {
            const writer = choose(model.writers, op.pick);
            if (writer === undefined) {
                return;
            }
            if (!writer.owner.released) {
                writeRange(writer.lease, writer.page, writer.owner, op.offset, op.length);
                return;
            }
            // The request was cancelled while this writer was delayed: refused, bytes unchanged.
            const refused = writer.lease.write(op.offset, new Uint8Array(1).fill(0xff));
            expect(refused.ok || refused.error.code).toBe("page_released");
            model.staleWritesRefused++;
            return;
        }
        case "dropWriter": {
            const writer = choose(model.writers, op.pick);
            if (writer === undefined) {
                return;
            }
            writer.lease.release();
            writer.page.hasWriter = false;
            model.writers.splice(model.writers.indexOf(writer), 1);
            return;
        }
        case "seal": {
            const target = choose(
                livePages.filter(({ page }) => !page.sealed && !page.hasWriter && page.numValidBytes > 0),
                op.pick
            );
            if (target === undefined) {
                return;
            }
            const { pageId, generation } = target.page.handle;
            const sealed = pool.seal(pageId, generation, op.numTokens);
            expect(sealed.ok).toBe(true);
            target.page.sealed = true;
            expect(pool.verify(pageId, generation)).toEqual(sealed);
            return;
        }
        case "beginTransfer": {
            const target = choose(livePages, op.pick);
            if (target === undefined) {
                return;
            }
            const acquired = pool.acquireReadLease(target.page.handle.pageId, target.page.handle.generation);
            if (!target.page.sealed) {
                expect(acquired.ok || acquired.error.code).toBe("page_not_sealed");
                model.readsBeforeSealRefused++;
                return;
            }
            if (!acquired.ok) {
                throw acquired.error;
            }
            target.page.numReaders++;
            model.readers.push({ lease: acquired.lease, page: target.page });
            return;
        }
        case "endTransfer": {
            const reader = choose(model.readers, op.pick);
            if (reader === undefined) {
                return;
            }
            // Exactly the owner's bytes, even if the owner has since released the page.
            expect(reader.lease.read()).toEqual(reader.page.bytes.subarray(0, reader.page.numValidBytes));
            reader.lease.release();
            reader.page.numReaders--;
            model.readers.splice(model.readers.indexOf(reader), 1);
            return;
        }
        case "release": {
            const owner = choose(model.live, op.pick);
            if (owner === undefined) {
                return;
            }
            const numLeased = owner.pages.filter(isLeased).length;
            expect(pool.release(owner.reservation)).toEqual({
                ok: true,
                numPagesScrubbed: owner.pages.length - numLeased,
                numPagesQuarantined: numLeased
            });
            owner.released = true;
            model.live.splice(model.live.indexOf(owner), 1);
            model.released.push(owner);
            return;
        }
        case "replayRelease": {
            const owner = choose(model.released, op.pick);
            if (owner === undefined) {
                return;
            }
            const replayed = pool.release(owner.reservation);
            expect(replayed.ok || replayed.error.code).toBe("double_release");
            model.doubleReleasesDetected++;
            return;
        }
        case "staleWrite": {
            const page = choose(
                model.released.flatMap((owner) => owner.pages),
                op.pick
            );
            if (page === undefined) {
                return;
            }
            const refused = pool.acquireWriteLease(page.handle.pageId, page.handle.generation);
            expect(refused.ok || refused.error.code).toBe(isLeased(page) ? "page_released" : "stale_generation");
            model.staleWritesRefused++;
            return;
        }
    }
}

function checkAfterStep(pool: PagePool, model: Model): void {
    assertAuditClean(pool.audit({ scanFreePages: true, verifySealedPages: true }));
    expect(pool.numFreePages).toBe(expectedNumFreePages(model));
    expect(pool.numActiveLeases).toBe(model.writers.length + model.readers.length);
    expect(pool.numLiveReservations).toBe(model.live.length);
    const counters = pool.counters;
    expect(counters.staleWritesRefused).toBe(model.staleWritesRefused);
    expect(counters.doubleReleasesDetected).toBe(model.doubleReleasesDetected);
    expect(counters.readsBeforeSealRefused).toBe(model.readsBeforeSealRefused);
    const snapshot = pool.snapshot();
    expect(snapshot.numPagesByState.reduce((sum, count) => sum + count, 0)).toBe(NUM_PAGES);
    // Every live page still belongs to the request that reserved it, at its generation.
    for (const owner of model.live) {
        for (const page of owner.pages) {
            expect(pool.pageInfo(page.handle.pageId)).toMatchObject({
                holder: owner.reservation.holder,
                generation: page.handle.generation,
                numValidBytes: page.numValidBytes
            });
        }
    }
}

describe("PagePool against a model", () => {
    it("keeps I1–I6 and conserves pages over random reserve, write, seal, transfer, cancel and release", () => {
        fc.assert(
            fc.property(fc.array(opArbitrary, { minLength: 1, maxLength: 60, size: "max" }), (ops) => {
                const pool = makePool({ numPages: NUM_PAGES, pageTokens: PAGE_TOKENS, pageBytes: PAGE_BYTES });
                const model: Model = {
                    live: [],
                    released: [],
                    writers: [],
                    readers: [],
                    numRequests: 0,
                    staleWritesRefused: 0,
                    doubleReleasesDetected: 0,
                    readsBeforeSealRefused: 0
                };
                for (const op of ops) {
                    apply(pool, model, op);
                    checkAfterStep(pool, model);
                }

                // Drain everything the run left behind: every page must come back free and zero.
                for (const writer of model.writers) {
                    writer.lease.release();
                }
                for (const reader of model.readers) {
                    reader.lease.release();
                }
                for (const owner of model.live) {
                    expect(pool.release(owner.reservation).ok).toBe(true);
                }
                expect(pool.counters.pagesScrubbed).toBe(pool.counters.numPagesReserved);
                expectNoLeaks(pool);
            }),
            { numRuns: 300 }
        );
    }, 30_000); // a property run of a few hundred histories: seconds on a loaded machine, never a timed assertion
});
