import type { PageHolder, PageId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import { PageArena } from "./PageArena.js";
import { ChecksumMismatchError, DisposedError, DoubleReleaseError, PageStateError } from "./pageErrors.js";
import type { PageReadLease, PageWriteLease } from "./PageLease.js";
import { validatePagePoolConfig, type PagePoolConfig, type PagePoolConfigInput } from "./PagePoolConfig.js";
import type { AuditOptions, AuditResult } from "./AuditResult.js";
import { auditPagePool } from "./PagePoolAudit.js";
import { scanPoolBytes, type ByteScanOptions, type ByteScanResult } from "./scanPoolBytes.js";
import { createPagePoolCounters, type PagePoolCounters } from "./PagePoolCounters.js";
import { snapshotPageLedger, type PagePoolSnapshot } from "./PagePoolSnapshot.js";
import { pageInfoOf, type PageInfo } from "./PageInfo.js";
import type { PageLeaseResult, ReleaseResult, SealResult, VerifyResult } from "./pagePoolResults.js";
import { PageState, isLiveState, pageStateName } from "./PageState.js";
import { PageLedger, type PageOwner } from "./PageLedger.js";
import type { PageHandle, Reservation, ReservationRef, ReserveRequest } from "./Reservation.js";
import { drainingLeases, type LeasePolicy } from "./LeasePolicy.js";
import { PoolLeases, type LeasePoolSide } from "./PoolLeases.js";
import { zeroingScrubber, type PageScrubber } from "./PageScrubber.js";

/** The rules a pool follows where a fault drill's sandbox may swap in a leaky one (engine/drills/). */
export interface PagePoolPolicies {
    readonly scrubber: PageScrubber;
    readonly leases: LeasePolicy;
}

/**
 * The host KV page pool: one arena of `numPages × pageBytes` bytes, handed out to holders in
 * pages and taken back only after every lease drains and the page is zeroed
 * (docs/ARCHITECTURE.md, Page lifecycle). Single-threaded: every method runs to completion, so a
 * page is never scrubbed in the middle of a read or write.
 */
export class PagePool {
    readonly config: Readonly<PagePoolConfig>;
    readonly #ledger: PageLedger;
    readonly #arena: PageArena;
    readonly #reservations = new Map<PageHolder, PageOwner>();
    readonly #counters = createPagePoolCounters();
    readonly #leases: PoolLeases;
    readonly #scrubber: PageScrubber;
    #nextGeneration = 1;
    #disposed = false;
    readonly #freedWatchers = new Set<() => void>();

    /**
     * Throws `PagePoolConfigError` for an unusable config, `ArenaAllocationError` when the host has
     * no room. `policies` are the production ones unless a fault drill's sandbox passes its own.
     */
    constructor(input: PagePoolConfigInput, policies: Partial<PagePoolPolicies> = {}) {
        this.#scrubber = policies.scrubber ?? zeroingScrubber;
        const validated = validatePagePoolConfig(input);
        if (!validated.ok) {
            throw validated.error;
        }
        this.config = validated.config;
        this.#arena = new PageArena(this.config.numPages, this.config.pageBytes);
        this.#ledger = new PageLedger(this.config.numPages);
        const pool: LeasePoolSide = {
            assertAlive: (operation) => this.#assertAlive(operation),
            isDisposed: () => this.#disposed,
            onQuarantinedLeaseEnded: (page) => {
                if (this.#scrubIfDrained(page)) {
                    this.#notifyFreed();
                }
            }
        };
        this.#leases = new PoolLeases(
            this.#ledger,
            this.#arena,
            this.#counters,
            this.config.pageBytes,
            policies.leases ?? drainingLeases,
            pool
        );
    }

    get counters(): Readonly<PagePoolCounters> {
        return { ...this.#counters };
    }

    get numFreePages(): number {
        this.#assertAlive("count free pages");
        return this.#ledger.numFree;
    }

    get numActiveLeases(): number {
        return this.#leases.numActive;
    }

    get numLiveReservations(): number {
        return this.#reservations.size;
    }

    get isDisposed(): boolean {
        return this.#disposed;
    }

    /**
     * Calls `watcher` at the end of every pool call in which pages came free (a release, or the last
     * lease on a quarantined page ending): how waits for pages are woken, without polling. It runs
     * inside that call, so it must only note the change. Returns the unsubscribe.
     */
    watchFreedPages(watcher: () => void): () => void {
        this.#freedWatchers.add(watcher);
        return () => void this.#freedWatchers.delete(watcher);
    }

    /** Whether `reserve()` of `numPages` would succeed now. No side effect. */
    canReserve(numPages: number): boolean {
        this.#assertAlive("ask for pages");
        invariant(Number.isSafeInteger(numPages) && numPages >= 0, () => `canReserve of ${numPages} pages`);
        return numPages <= this.#ledger.numFree;
    }

    /**
     * Takes `numPages` free pages for one holder, all at one new generation, or throws having
     * taken none. Admission asked `canReserve()` first, so a shortage here is a bug.
     * A holder holds at most one reservation at a time.
     */
    reserve(request: ReserveRequest): Reservation {
        this.#assertAlive("reserve pages");
        const { numPages, firstToken } = request;
        const { pageTokens } = this.config;
        invariant(Number.isSafeInteger(numPages) && numPages >= 1, () => `reserve of ${numPages} pages for ${request.holder}`);
        invariant(
            Number.isSafeInteger(firstToken) && firstToken >= 0 && Number.isSafeInteger(firstToken + numPages * pageTokens),
            () => `reserve for ${request.holder} from token ${firstToken} over ${numPages} pages of ${pageTokens} tokens`
        );
        invariant(
            numPages <= this.#ledger.numFree,
            () =>
                `reserve of ${numPages} pages for ${request.holder} with ${this.#ledger.numFree} free: ` +
                "admission must ask canReserve first"
        );
        const held = this.#reservations.get(request.holder);
        invariant(
            held === undefined,
            () => `${request.holder} reserves ${numPages} pages while holding ${held?.pages.length} at generation ${held?.generation}`
        );

        const generation = this.#nextGeneration++;
        const pages: PageId[] = [];
        const owner: PageOwner = { workspace: request.workspace, holder: request.holder, generation, pages, released: false };
        const ledger = this.#ledger;
        for (let index = 0; index < numPages; index++) {
            pages.push(ledger.takeFree(owner, firstToken + index * pageTokens, firstToken + (index + 1) * pageTokens));
        }
        this.#reservations.set(request.holder, owner);
        this.#counters.numReservations++;
        this.#counters.numPagesReserved += numPages;

        const handles: PageHandle[] = pages.map((page) => Object.freeze({ pageId: page, generation }));
        return Object.freeze({
            workspace: request.workspace,
            holder: request.holder,
            generation,
            firstToken,
            pages: Object.freeze(handles)
        });
    }

    /** The single writer of a reserved or written page. Refused when the claim is stale or the page is sealed. */
    acquireWriteLease(pageId: PageId, generation: number): PageLeaseResult<PageWriteLease> {
        return this.#leases.acquireWrite(pageId, generation);
    }

    /** A reader of a sealed page. Refused when the claim is stale or the page is not sealed yet. */
    acquireReadLease(pageId: PageId, generation: number): PageLeaseResult<PageReadLease> {
        return this.#leases.acquireRead(pageId, generation);
    }

    /**
     * Records the checksum of a written page and makes it read-only. `numTokens` (default: a full
     * page) narrows the page's token range to `[tokenStart, tokenStart + numTokens)`.
     * A late or duplicate seal is refused; sealing an unwritten page or one still being written is a bug.
     */
    seal(pageId: PageId, generation: number, numTokens: number = this.config.pageTokens): SealResult {
        this.#assertAlive("seal a page");
        const ledger = this.#ledger;
        const refusal = this.#ledger.claimRefusal(pageId, generation, "seal");
        if (refusal !== undefined) {
            this.#counters.staleSealsRefused++;
            return { ok: false, error: refusal };
        }
        const state = ledger.states[pageId] as number;
        if (state === PageState.Sealed) {
            this.#counters.writesAfterSealRefused++;
            return { ok: false, error: new PageStateError("page_already_sealed", pageId, generation, "seal", "sealed") };
        }
        invariant(
            state === PageState.Written,
            () => `seal of page ${pageId} at generation ${generation}, which is ${pageStateName(state)} with 0 bytes written`
        );
        invariant(
            ledger.writeLeased[pageId] === 0,
            () => `seal of page ${pageId} at generation ${generation} while its writer still holds a lease`
        );
        invariant(
            Number.isSafeInteger(numTokens) && numTokens >= 1 && numTokens <= this.config.pageTokens,
            () => `seal of page ${pageId} with ${numTokens} tokens, outside [1, ${this.config.pageTokens}]`
        );

        const checksum = this.#checksumOf(pageId);
        ledger.tokenEnds[pageId] = (ledger.tokenStarts[pageId] as number) + numTokens;
        ledger.checksums[pageId] = checksum;
        ledger.setState(pageId, PageState.Sealed);
        return { ok: true, checksum };
    }

    /** Recomputes a sealed page's checksum and compares it with the one recorded at seal (I7). */
    verify(pageId: PageId, generation: number): VerifyResult {
        this.#assertAlive("verify a page");
        const refusal = this.#ledger.claimRefusal(pageId, generation, "verify");
        if (refusal !== undefined) {
            this.#counters.staleSealsRefused++;
            return { ok: false, error: refusal };
        }
        const state = this.#ledger.states[pageId] as number;
        if (state !== PageState.Sealed) {
            this.#counters.readsBeforeSealRefused++;
            return { ok: false, error: new PageStateError("page_not_sealed", pageId, generation, "verify", pageStateName(state)) };
        }
        const sealed = this.#ledger.checksums[pageId] as bigint;
        const actual = this.#checksumOf(pageId);
        if (actual !== sealed) {
            this.#counters.checksumFailures++;
            return { ok: false, error: new ChecksumMismatchError(pageId, generation, sealed, actual) };
        }
        return { ok: true, checksum: actual };
    }

    /**
     * Ends a reservation: its pages are quarantined, and each is zeroed and freed as soon as no
     * lease holds it (in this call if none does). A second release of the same reservation, or of
     * an older one of the same holder, is counted and refused, changing nothing (double release; docs/FAILURE-MODES.md).
     */
    release(reservation: ReservationRef): ReleaseResult {
        this.#assertAlive("release pages");
        const owner = this.#reservations.get(reservation.holder);
        if (owner === undefined || owner.generation !== reservation.generation) {
            this.#counters.doubleReleasesDetected++;
            return { ok: false, error: new DoubleReleaseError(reservation.holder, reservation.generation, owner?.generation) };
        }
        this.#reservations.delete(reservation.holder);
        owner.released = true;
        this.#counters.numReleases++;

        const ledger = this.#ledger;
        let numPagesScrubbed = 0;
        for (const page of owner.pages) {
            invariant(
                ledger.owners[page] === owner && isLiveState(ledger.states[page] as number),
                () =>
                    `release of ${owner.holder} at generation ${owner.generation} finds page ${page} ` +
                    `${pageStateName(ledger.states[page] as number)} at generation ${ledger.generations[page]}`
            );
            ledger.setState(page, PageState.Quarantined);
            if (this.#scrubIfDrained(page)) {
                numPagesScrubbed++;
            }
        }
        if (numPagesScrubbed > 0) {
            this.#notifyFreed();
        }
        return { ok: true, numPagesScrubbed, numPagesQuarantined: owner.pages.length - numPagesScrubbed };
    }

    /** Fault drills only: flips one byte the owner wrote, as a bad transport would (flipped byte, docs/FAILURE-MODES.md). */
    injectByteFlip(pageId: PageId, generation: number, byteOffset: number): void {
        this.#assertAlive("inject a fault");
        const refusal = this.#ledger.claimRefusal(pageId, generation, "fault injection");
        invariant(refusal === undefined, () => `fault injection with a stale handle: ${refusal?.message}`);
        const numValidBytes = this.#ledger.numValidBytes[pageId] as number;
        invariant(
            Number.isSafeInteger(byteOffset) && byteOffset >= 0 && byteOffset < numValidBytes,
            () => `fault injection at byte ${byteOffset} of page ${pageId}, outside its valid bytes [0, ${numValidBytes})`
        );
        this.#arena.flipByte(pageId, byteOffset);
        this.#counters.faultsInjected++;
    }

    /**
     * Calls `visit` for every page that has an owner (reserved, written or sealed), skipping free
     * and quarantined ones in one typed-array read each: the engine audit's O(numPages) pass.
     */
    forEachOwnedPage(visit: (pageId: PageId, state: PageState, holder: PageHolder, generation: number) => void): void {
        this.#assertAlive("walk the pages");
        const ledger = this.#ledger;
        for (let page = 0; page < this.config.numPages; page++) {
            const state = ledger.states[page] as PageState;
            if (state === PageState.Free || state === PageState.Quarantined) {
                continue;
            }
            const owner = ledger.owners[page];
            if (owner !== undefined) {
                visit(page as PageId, state, owner.holder, ledger.generations[page] as number);
            }
        }
    }

    /** Fault drills only: every byte of a page, past its valid length too, to look for another holder's data. */
    inspectRawPage(pageId: PageId): Uint8Array {
        this.#assertAlive("inspect a page");
        this.#ledger.assertPageId(pageId);
        return this.#arena.readCopy(pageId, 0, this.config.pageBytes);
    }

    pageInfo(pageId: PageId): PageInfo {
        this.#assertAlive("inspect a page");
        this.#ledger.assertPageId(pageId);
        return pageInfoOf(this.#ledger, pageId);
    }

    /** Checks I1–I5 over every page, and I6 and the pool's share of I7 when `options` ask for the byte scans. */
    audit(options?: AuditOptions): AuditResult {
        this.#assertAlive("audit the pool");
        return auditPagePool(
            {
                ledger: this.#ledger,
                arena: this.#arena,
                pageTokens: this.config.pageTokens,
                pageBytes: this.config.pageBytes,
                reservations: this.#reservations,
                nextGeneration: this.#nextGeneration,
                numActiveLeases: this.#leases.numActive
            },
            options
        );
    }

    /**
     * The audit's byte scans (I6; the pool's share of I7) in slices that yield to the event loop,
     * for pools too large to scan in one step without stalling the streams; see `scanPoolBytes`.
     */
    scanBytes(options?: ByteScanOptions): Promise<ByteScanResult> {
        this.#assertAlive("scan the pool");
        return scanPoolBytes(
            { ledger: this.#ledger, arena: this.#arena, pageBytes: this.config.pageBytes, isDisposed: () => this.#disposed },
            options
        );
    }

    snapshot(): PagePoolSnapshot {
        this.#assertAlive("snapshot the pool");
        return snapshotPageLedger(this.#ledger, this.#leases.numActive);
    }

    /**
     * Drops the arena and every reservation. Idempotent; afterwards every call throws
     * `DisposedError`, except `release()` of a lease, which stays safe in `finally` blocks.
     */
    dispose(): void {
        if (this.#disposed) {
            return;
        }
        this.#disposed = true;
        this.#reservations.clear();
        this.#arena.dispose();
    }

    /** Zeroes a quarantined page and frees it once no lease holds it; whether it did. */
    #scrubIfDrained(page: PageId): boolean {
        if (!this.#leases.policy.drain(page, this.#ledger)) {
            return false;
        }
        if (this.#scrubber.scrub(this.#arena, page)) {
            this.#counters.pagesScrubbed++;
        }
        this.#ledger.pushFree(page);
        return true;
    }

    #notifyFreed(): void {
        for (const watcher of this.#freedWatchers) {
            watcher();
        }
    }

    #checksumOf(page: PageId): bigint {
        return this.#arena.checksum(page, this.#ledger.numValidBytes[page] as number, this.#ledger.tokenStarts[page] as number);
    }

    #assertAlive(operation: string): void {
        if (this.#disposed) {
            throw new DisposedError(operation);
        }
    }
}
