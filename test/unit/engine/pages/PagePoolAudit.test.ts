import { describe, expect, it } from "vitest";
import { pageId, requestId, workspaceId, type PageHolder } from "../../../../engine/core/ids.js";
import { InvariantError } from "../../../../engine/core/invariant.js";
import { PageArena } from "../../../../engine/pages/PageArena.js";
import { assertAuditClean } from "../../../support/assertAuditClean.js";
import { auditPagePool, type PagePoolAuditView } from "../../../../engine/pages/PagePoolAudit.js";
import { PageState } from "../../../../engine/pages/PageState.js";
import { PageLedger, type PageOwner } from "../../../../engine/pages/PageLedger.js";

// The pool never breaks its own invariants in the other tests, so here the bookkeeping is broken
// by hand, one bug of the incident class at a time, to show the audit names each with its numbers.

const NUM_PAGES = 4;
const PAGE_TOKENS = 4;
const PAGE_BYTES = 16;

interface Fixture {
    readonly ledger: PageLedger;
    readonly arena: PageArena;
    readonly reservations: Map<PageHolder, PageOwner>;
    view(overrides?: Partial<PagePoolAuditView>): PagePoolAuditView;
}

function fixture(): Fixture {
    const ledger = new PageLedger(NUM_PAGES);
    const arena = new PageArena(NUM_PAGES, PAGE_BYTES);
    const reservations = new Map<PageHolder, PageOwner>();
    return {
        ledger,
        arena,
        reservations,
        view: (overrides = {}) => ({
            ledger,
            arena,
            reservations,
            pageTokens: PAGE_TOKENS,
            pageBytes: PAGE_BYTES,
            nextGeneration: 3,
            numActiveLeases: 0,
            ...overrides
        })
    };
}

/** Reserves `numPages` the way the pool does, at `generation`. */
function reserve(subject: Fixture, name: string, generation: number, numPages: number): PageOwner {
    const pages: ReturnType<PageLedger["takeFree"]>[] = [];
    const owner: PageOwner = { workspace: workspaceId("s"), holder: requestId(name), generation, pages, released: false };
    for (let index = 0; index < numPages; index++) {
        pages.push(subject.ledger.takeFree(owner, index * PAGE_TOKENS, (index + 1) * PAGE_TOKENS));
    }
    subject.reservations.set(owner.holder, owner);
    return owner;
}

describe("auditPagePool", () => {
    it("passes a consistent ledger, and reports nothing it was not asked to scan", () => {
        const subject = fixture();
        reserve(subject, "r1", 1, 2);
        const result = auditPagePool(subject.view(), { scanFreePages: true });
        expect(result).toMatchObject({ ok: true, numViolations: 0, numPagesChecked: 4, numFreePagesScanned: 2 });
        assertAuditClean(result);
    });

    it("catches a page freed without scrubbing (I6), only when asked to scan the bytes", () => {
        const subject = fixture();
        subject.arena.write(2, 15, new Uint8Array([0xab]));
        expect(auditPagePool(subject.view()).ok).toBe(true);
        const result = auditPagePool(subject.view(), { scanFreePages: true });
        expect(result.violations).toEqual([
            { invariant: "I6", pageId: pageId(2), message: "free page 2 (arena bytes [32, 48)) is not all zero" }
        ]);
        expect(() => assertAuditClean(result)).toThrow(InvariantError);
        expect(() => assertAuditClean(result)).toThrow(/1 violations over 4 pages:\n {2}I6: free page 2/);
    });

    it("catches a lease on a free page and a quarantined page nobody holds (I3)", () => {
        const subject = fixture();
        subject.ledger.numReadLeases[3] = 1;
        const owner = reserve(subject, "r1", 1, 1);
        owner.released = true;
        subject.reservations.delete(owner.holder);
        subject.ledger.setState(pageId(0), PageState.Quarantined);
        const messages = auditPagePool(subject.view({ numActiveLeases: 1 })).violations.map((violation) => violation.message);
        expect(messages).toEqual([
            "page 0 is quarantined with no lease left; it should have been scrubbed",
            "free page 3 holds 1 read and 0 write leases"
        ]);
    });

    it("catches a page whose generation is not its owner's (I5)", () => {
        const subject = fixture();
        reserve(subject, "r1", 1, 1);
        subject.ledger.generations[0] = 2;
        expect(auditPagePool(subject.view()).violations).toEqual([
            { invariant: "I5", pageId: pageId(0), message: "page 0 is at generation 2, its owner r1 at 1" }
        ]);
    });

    it("catches a page listed by two live reservations, and counts that no longer add up (I1, I2)", () => {
        const subject = fixture();
        reserve(subject, "r1", 1, 1);
        const thief: PageOwner = {
            workspace: workspaceId("t"),
            holder: requestId("r2"),
            generation: 2,
            pages: [pageId(0)],
            released: false
        };
        subject.reservations.set(thief.holder, thief);
        const result = auditPagePool(subject.view());
        expect(result.violations.map((violation) => violation.invariant)).toEqual(["I2", "I1", "I2"]);
        expect(result.violations.map((violation) => violation.message)).toEqual([
            "page 0 belongs to two live reservations, one of them r2",
            "r2 at generation 2 lists page 0, which another owner holds",
            "live reservations list 2 pages, 1 pages are reserved, written or sealed"
        ]);
    });

    it("catches a page taken off the free list without an owner (I1, I2)", () => {
        const subject = fixture();
        subject.ledger.setState(pageId(1), PageState.Reserved);
        const messages = auditPagePool(subject.view()).violations.map((violation) => `${violation.invariant}: ${violation.message}`);
        expect(messages).toEqual([
            "I1: page 1 is reserved with no owner",
            "I2: the free list holds 4 pages, 3 pages are free",
            "I2: page 1 is on the free list but reserved",
            "I2: live reservations list 0 pages, 1 pages are reserved, written or sealed"
        ]);
    });
});
