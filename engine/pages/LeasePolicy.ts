import type { PageId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { PageArena } from "./PageArena.js";
import { PageStateError } from "./pageErrors.js";
import type { PageLedger } from "./PageLedger.js";
import type { PageLease, PageWriteLease, PageWriteResult } from "./PageLease.js";
import { PageState, pageStateName } from "./PageState.js";

/** A write that reached the pool through a lease whose page its owner released. */
export interface LateWrite {
    readonly lease: PageWriteLease;
    readonly byteOffset: number;
    readonly bytes: Uint8Array;
}

/**
 * What the pool does about leases that are still held when their page's owner releases it (the
 * "late write" and "reuse while leased" failure modes, docs/FAILURE-MODES.md). The pool receives
 * one at construction: `drainingLeases` always, except in a fault drill's sandbox (engine/drills/).
 */
export interface LeasePolicy {
    /**
     * Asked for a quarantined page each time it might be freed (at its release, and as each of its
     * leases ends): whether no lease holds it any more, so it may be scrubbed and freed now.
     */
    drain(page: PageId, ledger: PageLedger): boolean;
    /** A write through a lease whose page was released: applied or refused, as a value (the pool counts refusals). */
    writeAfterRelease(write: LateWrite, ledger: PageLedger, arena: PageArena): PageWriteResult;
    /** A lease ending after its page was freed or reserved again at another generation. */
    endAfterReuse(lease: PageLease, ledger: PageLedger): void;
}

/**
 * A released page stays quarantined until its last lease drains (I3), so no lease ever outlives
 * its page; a write through a lease on a quarantined page is refused, never applied.
 */
export const drainingLeases: LeasePolicy = Object.freeze({
    drain(page: PageId, ledger: PageLedger): boolean {
        return ledger.numReadLeases[page] === 0 && ledger.writeLeased[page] === 0;
    },

    writeAfterRelease({ lease }: LateWrite, ledger: PageLedger): PageWriteResult {
        const page = lease.pageId;
        const state = ledger.states[page] as number;
        invariant(
            state === PageState.Quarantined && ledger.generations[page] === lease.generation,
            () =>
                `write lease on page ${page} at generation ${lease.generation} finds it ${pageStateName(state)} at generation ${ledger.generations[page]}`
        );
        return { ok: false, error: new PageStateError("page_released", page, lease.generation, "write", "quarantined") };
    },

    endAfterReuse(lease: PageLease, ledger: PageLedger): void {
        invariant(
            false,
            `${lease.kind} lease on page ${lease.pageId} at generation ${lease.generation} outlived its page ` +
                `(${pageStateName(ledger.states[lease.pageId] as number)} at generation ${ledger.generations[lease.pageId]})`
        );
    }
});
