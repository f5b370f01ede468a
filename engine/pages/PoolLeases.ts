import type { PageId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { PageArena } from "./PageArena.js";
import { PageStateError } from "./pageErrors.js";
import type { LeasePolicy } from "./LeasePolicy.js";
import type { PageLedger } from "./PageLedger.js";
import {
    PageReadLease,
    PageWriteLease,
    type PageLease,
    type PageLeaseHost,
    type PageTargetResult,
    type PageWriteResult
} from "./PageLease.js";
import type { MutablePagePoolCounters } from "./PagePoolCounters.js";
import type { PageLeaseResult } from "./pagePoolResults.js";
import { PageState, pageStateName } from "./PageState.js";

/** What the leases need of the pool that owns them. */
export interface LeasePoolSide {
    /** Throws `DisposedError` for `operation` once the pool is disposed. */
    assertAlive(operation: string): void;
    isDisposed(): boolean;
    /** A lease on a quarantined page ended: the page may be free now. */
    onQuarantinedLeaseEnded(page: PageId): void;
}

/**
 * The pool's leases: who may write or read which page at which generation, and what their writes
 * and reads do. A lease is taken only on a claim that holds (`PageLedger.claimRefusal`); writes
 * and reads are bounded by the page and by what its owner wrote (Cloudbleed); what becomes of a
 * lease whose page its owner released is the pool's `LeasePolicy`. Part of `PagePool`: single-
 * threaded with it, so a page is never scrubbed in the middle of a read or write.
 */
export class PoolLeases implements PageLeaseHost {
    #numActive = 0;

    constructor(
        private readonly ledger: PageLedger,
        private readonly arena: PageArena,
        private readonly counters: MutablePagePoolCounters,
        private readonly pageBytes: number,
        readonly policy: LeasePolicy,
        private readonly pool: LeasePoolSide
    ) {}

    /** Leases held right now, readers and writers. */
    get numActive(): number {
        return this.#numActive;
    }

    /** The single writer of a reserved or written page. Refused when the claim is stale or the page is sealed. */
    acquireWrite(pageId: PageId, generation: number): PageLeaseResult<PageWriteLease> {
        this.pool.assertAlive("lease a page for writing");
        const refusal = this.ledger.claimRefusal(pageId, generation, "write lease");
        if (refusal !== undefined) {
            this.counters.staleWritesRefused++;
            return { ok: false, error: refusal };
        }
        if (this.ledger.states[pageId] === PageState.Sealed) {
            this.counters.writesAfterSealRefused++;
            return { ok: false, error: new PageStateError("page_already_sealed", pageId, generation, "write lease", "sealed") };
        }
        invariant(this.ledger.writeLeased[pageId] === 0, () => `second writer on page ${pageId} at generation ${generation}`);
        this.ledger.writeLeased[pageId] = 1;
        this.#numActive++;
        return { ok: true, lease: new PageWriteLease(pageId, generation, this) };
    }

    /** A reader of a sealed page. Refused when the claim is stale or the page is not sealed yet. */
    acquireRead(pageId: PageId, generation: number): PageLeaseResult<PageReadLease> {
        this.pool.assertAlive("lease a page for reading");
        const refusal = this.ledger.claimRefusal(pageId, generation, "read lease");
        if (refusal !== undefined) {
            this.counters.staleReadsRefused++;
            return { ok: false, error: refusal };
        }
        const state = this.ledger.states[pageId] as number;
        if (state !== PageState.Sealed) {
            this.counters.readsBeforeSealRefused++;
            return { ok: false, error: new PageStateError("page_not_sealed", pageId, generation, "read lease", pageStateName(state)) };
        }
        this.ledger.numReadLeases[pageId] = (this.ledger.numReadLeases[pageId] as number) + 1;
        this.#numActive++;
        return { ok: true, lease: new PageReadLease(pageId, generation, this) };
    }

    writeThrough(lease: PageWriteLease, byteOffset: number, bytes: Uint8Array): PageWriteResult {
        this.pool.assertAlive("write to a page");
        const ledger = this.ledger;
        const page = lease.pageId;
        const state = ledger.states[page] as number;
        if (state === PageState.Quarantined || state === PageState.Free || ledger.generations[page] !== lease.generation) {
            const late = this.policy.writeAfterRelease({ lease, byteOffset, bytes }, ledger, this.arena);
            if (!late.ok) {
                this.counters.staleWritesRefused++;
            }
            return late;
        }
        invariant(
            state === PageState.Reserved || state === PageState.Written,
            () => `write lease on page ${page} at generation ${lease.generation} finds it ${pageStateName(state)}`
        );
        const end = byteOffset + bytes.length;
        const inBounds = Number.isSafeInteger(byteOffset) && byteOffset >= 0 && end <= this.pageBytes;
        if (!inBounds) {
            this.counters.outOfBoundsRefused++;
        }
        invariant(
            inBounds,
            () => `write of ${bytes.length} bytes at offset ${byteOffset} of page ${page} ends at ${end}, past its ${this.pageBytes} bytes`
        );

        this.arena.write(page, byteOffset, bytes);
        if (bytes.length > 0) {
            ledger.numValidBytes[page] = Math.max(ledger.numValidBytes[page] as number, end);
            if (state === PageState.Reserved) {
                ledger.setState(page, PageState.Written);
            }
        }
        return { ok: true, numValidBytes: ledger.numValidBytes[page] as number };
    }

    targetThrough(lease: PageWriteLease, byteOffset: number, numBytes: number): PageTargetResult {
        this.pool.assertAlive("lease a page's bytes to a writer");
        const refusal = this.#lateWriteRefusal(lease, "write target");
        if (refusal !== undefined) {
            return { ok: false, error: refusal };
        }
        const page = lease.pageId;
        const end = byteOffset + numBytes;
        const inBounds =
            Number.isSafeInteger(byteOffset) && byteOffset >= 0 && Number.isSafeInteger(end) && end >= byteOffset && end <= this.pageBytes;
        if (!inBounds) {
            this.counters.outOfBoundsRefused++;
        }
        invariant(inBounds, () => `write target [${byteOffset}, ${end}) of page ${page} ends past its ${this.pageBytes} bytes`);
        return { ok: true, bytes: this.arena.view(page, byteOffset, end) };
    }

    recordWrittenThrough(lease: PageWriteLease, numValidBytes: number): PageWriteResult {
        this.pool.assertAlive("record a page's written bytes");
        const refusal = this.#lateWriteRefusal(lease, "write");
        if (refusal !== undefined) {
            return { ok: false, error: refusal };
        }
        const page = lease.pageId;
        const inBounds = Number.isSafeInteger(numValidBytes) && numValidBytes > 0 && numValidBytes <= this.pageBytes;
        if (!inBounds) {
            this.counters.outOfBoundsRefused++;
        }
        invariant(inBounds, () => `${numValidBytes} bytes recorded as written on page ${page} of ${this.pageBytes} bytes`);
        const ledger = this.ledger;
        ledger.numValidBytes[page] = Math.max(ledger.numValidBytes[page] as number, numValidBytes);
        if (ledger.states[page] === PageState.Reserved) {
            ledger.setState(page, PageState.Written);
        }
        return { ok: true, numValidBytes: ledger.numValidBytes[page] as number };
    }

    /**
     * Why a write target or a record of bytes written in place is refused: the owner released the
     * page (counted as a stale write). Bytes already written through a target stay in the page,
     * which its lease keeps quarantined until the scrub zeroes them.
     */
    #lateWriteRefusal(lease: PageWriteLease, operation: string): PageStateError | undefined {
        const ledger = this.ledger;
        const page = lease.pageId;
        const state = ledger.states[page] as number;
        if (state === PageState.Quarantined || state === PageState.Free || ledger.generations[page] !== lease.generation) {
            this.counters.staleWritesRefused++;
            return new PageStateError("page_released", page, lease.generation, operation, pageStateName(state));
        }
        invariant(
            state === PageState.Reserved || state === PageState.Written,
            () => `write lease on page ${page} at generation ${lease.generation} finds it ${pageStateName(state)}`
        );
        return undefined;
    }

    readThrough(lease: PageReadLease, byteOffset: number, numBytes: number | undefined, copy: boolean): Uint8Array {
        this.pool.assertAlive("read a page");
        const page = lease.pageId;
        const numValidBytes = this.ledger.numValidBytes[page] as number;
        const end = byteOffset + (numBytes ?? numValidBytes - byteOffset);
        const inBounds =
            Number.isSafeInteger(byteOffset) && byteOffset >= 0 && Number.isSafeInteger(end) && end >= byteOffset && end <= numValidBytes;
        if (!inBounds) {
            this.counters.outOfBoundsRefused++;
        }
        invariant(
            inBounds,
            () =>
                `read of bytes [${byteOffset}, ${end}) of page ${page} at generation ${lease.generation}, ` +
                `past its ${numValidBytes} valid bytes`
        );
        return copy ? this.arena.readCopy(page, byteOffset, end) : this.arena.view(page, byteOffset, end);
    }

    numValidBytesOf(lease: PageReadLease): number {
        this.pool.assertAlive("read a page");
        return this.ledger.numValidBytes[lease.pageId] as number;
    }

    releaseLease(lease: PageLease): void {
        if (this.pool.isDisposed()) {
            return;
        }
        const ledger = this.ledger;
        const page = lease.pageId;
        if (ledger.generations[page] !== lease.generation || ledger.states[page] === PageState.Free || ledger.zeroing[page] === 1) {
            this.policy.endAfterReuse(lease, ledger); // a bug, unless a drill's leaky policy drained the page early
            this.#numActive--;
            return;
        }
        if (lease.kind === "write") {
            invariant(ledger.writeLeased[page] === 1, () => `write lease release on page ${page}, which has no writer`);
            ledger.writeLeased[page] = 0;
        } else {
            invariant((ledger.numReadLeases[page] as number) > 0, () => `read lease release on page ${page}, which has 0 readers`);
            ledger.numReadLeases[page] = (ledger.numReadLeases[page] as number) - 1;
        }
        this.#numActive--;
        if (ledger.states[page] === PageState.Quarantined) {
            this.pool.onQuarantinedLeaseEnded(page);
        }
    }
}
