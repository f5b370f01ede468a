import type { PageId } from "../core/ids.js";
import type { PrefillOverflowPolicy } from "../handoff/PrefillOverflowPolicy.js";
import type { LeasePolicy, LateWrite } from "../pages/LeasePolicy.js";
import type { PageArena } from "../pages/PageArena.js";
import type { PageLedger } from "../pages/PageLedger.js";
import type { PageWriteResult } from "../pages/PageLease.js";
import type { PageScrubber } from "../pages/PageScrubber.js";
import type { AdmissionPolicy } from "../request/admission.js";
import type { RequestLimit } from "../request/admission.js";

// The leaky variants of the engine's policies (engine/EnginePolicies.ts): each one is the engine
// with one guard switched off, as a fault drill's sandbox runs it to show the leak that guard
// prevents. Nothing outside engine/drills/ and the tests of the guards passes them.

/** Guard off: released pages go back to the free list without being zeroed (skipped scrub; docs/FAILURE-MODES.md). */
export const skippingScrubber: PageScrubber = Object.freeze({
    scrub: (): boolean => false
});

/**
 * Guards off: a released page is freed at once, its leases forgotten rather than drained
 * (late write after cancel, pages reused under a reader; docs/FAILURE-MODES.md), and a write through such a lease lands wherever the page is now, though
 * it was released and reused (late write after cancel, replayed completion; docs/FAILURE-MODES.md).
 */
export const forgetfulLeases: LeasePolicy = Object.freeze({
    drain(page: PageId, ledger: PageLedger): boolean {
        ledger.writeLeased[page] = 0;
        ledger.numReadLeases[page] = 0;
        return true;
    },

    writeAfterRelease({ lease, byteOffset, bytes }: LateWrite, ledger: PageLedger, arena: PageArena): PageWriteResult {
        arena.write(lease.pageId, byteOffset, bytes);
        return { ok: true, numValidBytes: ledger.numValidBytes[lease.pageId] as number };
    },

    endAfterReuse(): void {
        // the lease was forgotten when its page was freed: nothing is left to release
    }
});

/** Guard off: requests are admitted against the configured window alone, not the measured capacities (the 2026 incident). */
export const windowOnlyAdmission: AdmissionPolicy = Object.freeze({
    limitOf: (window: RequestLimit & { readonly configured: number }): RequestLimit => ({ limit: window.configured, boundBy: "window" })
});

/**
 * Guard off: a prompt longer than the prefill sequence holds is not refused; prefill records
 * nothing a later step reads, evaluates a one-page stub and reports the transfer complete
 * (decode over stale pages; docs/FAILURE-MODES.md).
 */
export const stubPrefillOverflow: PrefillOverflowPolicy = Object.freeze({
    tokensToEvaluate(tokens: readonly number[], numHeld: number, capacity: number, pageTokens: number): readonly number[] {
        return numHeld + tokens.length > capacity ? tokens.slice(0, pageTokens) : tokens;
    }
});
