import type { PageHolder, PageId, WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import { PageArena } from "./PageArena.js";
import { ChecksumMismatchError, DisposedError, DoubleReleaseError, PageStateError } from "./pageErrors.js";
import type { PageReadLease, PageWriteLease } from "./PageLease.js";
import { validatePagePoolConfig, type PagePoolConfig, type PagePoolConfigInput } from "./PagePoolConfig.js";
import type { AuditOptions, AuditResult } from "./AuditResult.js";
import { auditPagePool } from "./PagePoolAudit.js";
import { scanPoolBytes, type ByteScanOptions, type ByteScanResult } from "./scanPoolBytes.js";
import { createPagePoolCounters, type MutablePagePoolCounters, type PagePoolCounters } from "./PagePoolCounters.js";
import { snapshotPageLedger, type PagePoolSnapshot } from "./PagePoolSnapshot.js";
import { pageInfoOf, type PageInfo } from "./PageInfo.js";
import type {
    PageAccessRefusal,
    PageLeaseResult,
    PagesSealResult,
    PagesVerifyResult,
    PageToSeal,
    ReleaseResult,
    SealResult,
    VerifyResult
} from "./pagePoolResults.js";
import { OFF_THREAD_MIN_BYTES, PageHasher } from "./PageHasher.js";
import { BegunSeals } from "./BegunSeals.js";
import { PageState, isLiveState, pageStateName } from "./PageState.js";
import { PageLedger, type PageOwner } from "./PageLedger.js";
import type { PageHandle, Reservation, ReservationRef, ReserveRequest } from "./Reservation.js";
import { drainingLeases, type LeasePolicy } from "./LeasePolicy.js";
import { PoolLeases, type LeasePoolSide } from "./PoolLeases.js";
import { zeroingScrubber, type PageScrubber } from "./PageScrubber.js";
import { noMemoryEvents, type MemoryEventSink } from "../audit/MemoryEventLog.js";
import { pageStateNames } from "../../contract/EngineSnapshot.js";

/** A refusal and the counter it bumps when it is returned. */
interface CountedRefusal {
    readonly error: PageAccessRefusal;
    readonly counter: keyof MutablePagePoolCounters;
}

const noPause = (): Promise<void> => Promise.resolve();

/** Whose pages a scrub freed, for the memory timeline. */
interface ScrubbedOwner {
    readonly workspace: WorkspaceId;
    readonly requestId: PageHolder;
    readonly generation: number;
}

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
    /** Hashes big batches of pages off the engine's thread; made at `startHashingThreads` or the first batch. */
    #hasher: PageHasher | undefined;
    /** Checksums of finished pages being computed while their writer writes the next (`beginSeal`). */
    readonly #begunSeals = new BegunSeals();
    /** Drained pages being zeroed on the page threads, and who waits for none to be (`whenZeroed`). */
    #numPagesZeroing = 0;
    readonly #zeroedWaiters: (() => void)[] = [];
    #nextGeneration = 1;
    #disposed = false;
    readonly #freedWatchers = new Set<() => void>();
    /** The memory timeline (engine/audit/MemoryEventLog.ts): every reservation, seal, verification, release and scrub. */
    readonly #events: MemoryEventSink;

    /**
     * Throws `PagePoolConfigError` for an unusable config, `ArenaAllocationError` when the host has
     * no room. `policies` are the production ones unless a fault drill's sandbox passes its own.
     */
    constructor(input: PagePoolConfigInput, policies: Partial<PagePoolPolicies> = {}, events: MemoryEventSink = noMemoryEvents) {
        this.#scrubber = policies.scrubber ?? zeroingScrubber;
        this.#events = events;
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
                if (this.#scrubDrained([page], undefined).freed.length > 0) {
                    this.#events.record({ kind: "scrubbed", pages: [page], pageState: "free", outcome: "ok" });
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

    /** Drained pages being zeroed on the page threads right now: quarantined, free once they are done. */
    get numPagesZeroing(): number {
        return this.#numPagesZeroing;
    }

    /** Settles once no released page is being zeroed off the engine's thread (at once when none is, or once disposed). */
    whenZeroed(): Promise<void> {
        if (this.#numPagesZeroing === 0 || this.#disposed) {
            return Promise.resolve();
        }
        return new Promise((resolve) => this.#zeroedWaiters.push(resolve));
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
        this.#events.record({
            kind: "reserved",
            workspace: request.workspace,
            requestId: request.holder,
            pages: [...pages],
            pageState: "reserved",
            generation,
            numTokens: numPages * pageTokens,
            numBytes: numPages * this.config.pageBytes,
            outcome: "ok"
        });

        const handles: PageHandle[] = pages.map((page) => Object.freeze({ pageId: page, generation }));
        return Object.freeze({
            workspace: request.workspace,
            holder: request.holder,
            generation,
            firstToken,
            pages: Object.freeze(handles)
        });
    }

    /**
     * Starts the page hashing threads now where every page is big enough to be hashed on them, and
     * settles once they are up (never rejecting): an engine that waits for this before it serves
     * keeps their boot out of its first request (its handoff would wait for them, or its prefill
     * share the cores with them). Nothing to start for smaller pages.
     */
    async startHashingThreads(): Promise<void> {
        this.#assertAlive("start the hashing threads");
        if (this.config.pageBytes >= OFF_THREAD_MIN_BYTES) {
            await this.#pageHasher().start();
        }
    }

    /** The single writer of a reserved or written page. Refused when the claim is stale or the page is sealed. */
    acquireWriteLease(pageId: PageId, generation: number): PageLeaseResult<PageWriteLease> {
        const leased = this.#leases.acquireWrite(pageId, generation);
        if (leased.ok) {
            this.#begunSeals.forget(pageId); // it may be written again: a checksum begun before describes older bytes
        }
        return leased;
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
        const refusal = this.#sealRefusal(pageId, generation, numTokens);
        if (refusal !== undefined) {
            return { ok: false, error: this.#counted(refusal) };
        }
        const checksum = this.#checksumOf(pageId);
        this.#applySeal(pageId, numTokens, checksum);
        return { ok: true, checksum };
    }

    /**
     * Starts the seal of a page its writer has finished (written, its write lease released): its
     * checksum is computed off the engine's thread from now, while the writer writes the next
     * pages, and `sealPages` takes it instead of hashing the page after the last one is written.
     * Does nothing where the claim ended, the page is still leased, or it is too small to be worth
     * a thread's round trip: the seal then hashes it as before. Settles, never rejecting, once the
     * page is hashed: with whether its seal was begun.
     */
    beginSeal(pageId: PageId, generation: number): Promise<boolean> {
        this.#assertAlive("begin a seal");
        const ledger = this.#ledger;
        const numBytes = ledger.numValidBytes[pageId] as number;
        if (!this.#isFinished(pageId, generation) || !this.#pageHasher().isWorthThreads(numBytes)) {
            return Promise.resolve(false);
        }
        const hasher = this.#pageHasher();
        const tokenStart = ledger.tokenStarts[pageId] as number;
        const checksum = hasher.hash([this.#arena.hashJob(pageId, numBytes, tokenStart)]).then(([value]) => value!);
        return this.#begunSeals.begin(pageId, generation, numBytes, tokenStart, checksum).then(() => true);
    }

    /**
     * `beginSeal` for a page its writer hashed as it wrote it (llama.cpp's save into the pages,
     * `StateTarget.pageHashes`): `checksum` is the `pageChecksum` of its `numBytes` valid bytes
     * seeded with `tokenStart`, and the seal takes it instead of hashing the page again, if the
     * page is still as it was hashed (its claim, length and first token; no write lease since).
     * Returns whether it was recorded; where not, the seal hashes the page itself.
     */
    beginSealWith(pageId: PageId, generation: number, hashed: { numBytes: number; tokenStart: number; checksum: bigint }): boolean {
        this.#assertAlive("begin a seal");
        const ledger = this.#ledger;
        if (
            !this.#isFinished(pageId, generation) ||
            ledger.numValidBytes[pageId] !== hashed.numBytes ||
            ledger.tokenStarts[pageId] !== hashed.tokenStart
        ) {
            return false;
        }
        void this.#begunSeals.begin(pageId, generation, hashed.numBytes, hashed.tokenStart, Promise.resolve(hashed.checksum));
        return true;
    }

    /**
     * `seal()` of each page in order, all at `generation`, stopping at the first refusal (the pages
     * before it stay sealed). Pages whose seal was begun (`beginSeal`) take the checksum computed
     * then; the rest, when at least `OFF_THREAD_MIN_BYTES`, are hashed off the engine's thread, in
     * parallel (PageHasher); every check is made again once the checksums are back, so a claim that
     * ended meanwhile is refused as a late seal. A smaller batch is sealed here a page at a time,
     * `pause()` before each.
     */
    async sealPages(pages: readonly PageToSeal[], generation: number, pause: () => Promise<void> = noPause): Promise<PagesSealResult> {
        this.#assertAlive("seal pages");
        const ledger = this.#ledger;
        const checksums: bigint[] = [];
        const numBytesNow = pages.map(({ pageId }) => ledger.numValidBytes[pageId] as number);
        const begun = pages.map(({ pageId }, index) =>
            this.#begunSeals.take(pageId, generation, numBytesNow[index]!, ledger.tokenStarts[pageId] as number)
        );
        const rest = pages.filter((_, index) => begun[index] === undefined);
        const [begunChecksums, hashed] = await Promise.all([
            Promise.all(begun),
            this.#hashOffThread(
                rest.map(({ pageId }) => pageId),
                (page, index) => this.#sealRefusal(page, generation, rest[index]!.numTokens)
            )
        ]);
        let restIndex = 0;
        for (const [index, { pageId, numTokens }] of pages.entries()) {
            const begunChecksum = begunChecksums[index];
            const isBegun = begun[index] !== undefined;
            if (!isBegun && hashed === undefined) {
                await pause();
            }
            this.#assertAlive("seal a page");
            const refusal = this.#sealRefusal(pageId, generation, numTokens);
            if (refusal !== undefined) {
                this.#recordRefusal(pages.map(({ pageId: page }) => page).slice(index), generation, refusal.error.message);
                return { ok: false, index, error: this.#counted(refusal) };
            }
            let checksum: bigint;
            if (isBegun) {
                // no write lease since it began (acquiring one forgets it): the page holds the bytes it hashed
                invariant(
                    ledger.numValidBytes[pageId] === numBytesNow[index],
                    () =>
                        `page ${pageId} (${index + 1} of ${pages.length}) holds ${ledger.numValidBytes[pageId]} bytes at its seal, ` +
                        `${numBytesNow[index]} when its begun checksum was taken`
                );
                checksum = begunChecksum ?? this.#checksumOf(pageId);
            } else {
                checksum = hashed === undefined ? this.#checksumOf(pageId) : hashed.checksumOf(restIndex);
                restIndex++;
            }
            this.#applySeal(pageId, numTokens, checksum);
            checksums.push(checksum);
        }
        this.#recordProven(
            "sealed",
            pages.map(({ pageId }) => pageId),
            generation,
            checksums
        );
        return { ok: true, checksums };
    }

    /** Recomputes a sealed page's checksum and compares it with the one recorded at seal (I7). */
    verify(pageId: PageId, generation: number): VerifyResult {
        this.#assertAlive("verify a page");
        const refusal = this.#verifyRefusal(pageId, generation);
        if (refusal !== undefined) {
            return { ok: false, error: this.#counted(refusal) };
        }
        return this.#compareChecksum(pageId, generation, this.#checksumOf(pageId));
    }

    /**
     * `verify()` of each page in order, all at `generation`, stopping at the first failure. A batch
     * of at least `OFF_THREAD_MIN_BYTES` is hashed off the engine's thread, its pages in parallel,
     * and each page's claim is checked again once the checksums are back: a page released (and
     * scrubbed) meanwhile is refused, never passed. A smaller batch is verified here, `pause()` before each page.
     */
    async verifyPages(pages: readonly PageId[], generation: number, pause: () => Promise<void> = noPause): Promise<PagesVerifyResult> {
        this.#assertAlive("verify pages");
        const hashed = await this.#hashOffThread(pages, (page) => this.#verifyRefusal(page, generation));
        if (hashed !== undefined) {
            return this.#settleVerification(pages, generation, (index) => hashed.checksumOf(index));
        }
        return this.#settleVerification(pages, generation, (index) => this.#checksumOf(pages[index]!), pause);
    }

    /**
     * `verifyPages` for pages whose checksums were recomputed as they were read, by the load that read
     * them under read leases (`StateChunks.pageChecks`): the same checks, the same counters and the
     * same record, the checksums taken from `recomputed` instead of hashing the pages again.
     */
    verifyPagesRecomputed(pages: readonly PageId[], generation: number, recomputed: readonly bigint[]): Promise<PagesVerifyResult> {
        this.#assertAlive("verify pages");
        invariant(
            recomputed.length === pages.length,
            () => `${recomputed.length} checksums recomputed for ${pages.length} pages to verify`
        );
        return this.#settleVerification(pages, generation, (index) => recomputed[index]!);
    }

    /**
     * `verify()` of each page in order against the checksum `actual` gives it, stopping at the first
     * failure; `pause()` before each page where given (pages hashed here), none where the checksums
     * are in hand.
     */
    async #settleVerification(
        pages: readonly PageId[],
        generation: number,
        actual: (index: number) => bigint,
        pause?: () => Promise<void>
    ): Promise<PagesVerifyResult> {
        const checksums: bigint[] = [];
        for (const [index, pageId] of pages.entries()) {
            if (pause !== undefined) {
                await pause();
            }
            this.#assertAlive("verify a page");
            const refusal = this.#verifyRefusal(pageId, generation);
            if (refusal !== undefined) {
                this.#recordRefusal(pages.slice(index), generation, refusal.error.message);
                return { ok: false, index, error: this.#counted(refusal) };
            }
            const verified = this.#compareChecksum(pageId, generation, actual(index));
            if (!verified.ok) {
                this.#recordRefusal(pages.slice(index), generation, verified.error.message);
                return { ok: false, index, error: verified.error };
            }
            checksums.push(verified.checksum);
        }
        this.#recordProven("verified", pages, generation, checksums);
        return { ok: true, checksums };
    }

    /**
     * Ends a reservation: its pages are quarantined, and each is zeroed and freed as soon as no
     * lease holds it (in this call if none does, or once the page threads have zeroed it, where
     * they run and the pages are 1 MiB or more: `whenZeroed`; `zeroNow` zeroes them in this call
     * regardless, for a caller that needs the room at once). A second release of the same
     * reservation, or of an older one of the same holder, is counted and refused, changing nothing
     * (double release; docs/FAILURE-MODES.md).
     */
    release(reservation: ReservationRef, { zeroNow = false }: { readonly zeroNow?: boolean } = {}): ReleaseResult {
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
        for (const page of owner.pages) {
            invariant(
                ledger.owners[page] === owner && isLiveState(ledger.states[page] as number),
                () =>
                    `release of ${owner.holder} at generation ${owner.generation} finds page ${page} ` +
                    `${pageStateName(ledger.states[page] as number)} at generation ${ledger.generations[page]}`
            );
            ledger.setState(page, PageState.Quarantined);
        }
        const { workspace, holder, generation } = owner;
        const { freed: scrubbed, zeroing } = this.#scrubDrained(owner.pages, { workspace, requestId: holder, generation }, zeroNow);
        const numPagesScrubbed = scrubbed.length;
        const numWaiting = owner.pages.length - numPagesScrubbed - zeroing.length;
        this.#events.record({
            kind: "released",
            workspace,
            requestId: holder,
            pages: [...owner.pages],
            pageState: "quarantined",
            generation,
            outcome: "ok",
            detail:
                `${owner.pages.length} pages: ${numPagesScrubbed} scrubbed now, ` +
                (zeroing.length > 0 ? `${zeroing.length} being zeroed off the engine's thread, ` : "") +
                `${numWaiting} wait for their leases`
        });
        if (numPagesScrubbed > 0) {
            this.#events.record({
                kind: "scrubbed",
                workspace,
                requestId: holder,
                pages: scrubbed,
                pageState: "free",
                generation,
                outcome: "ok"
            });
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
        this.#resolveZeroedWaiters();
        this.#reservations.clear();
        this.#begunSeals.clear();
        this.#hasher?.dispose();
        this.#hasher = undefined;
        this.#arena.dispose();
    }

    /** A batch of pages sealed or verified, with their checksums (hex) and their owner. */
    #recordProven(kind: "sealed" | "verified", pages: readonly PageId[], generation: number, checksums: readonly bigint[]): void {
        const owner = pages.length > 0 ? this.#ledger.owners[pages[0]!] : undefined;
        this.#events.record({
            kind,
            workspace: owner?.workspace,
            requestId: owner?.holder,
            pages: [...pages],
            pageState: "sealed",
            generation,
            numBytes: pages.length * this.config.pageBytes,
            checksums: checksums.map((checksum) => checksum.toString(16).padStart(16, "0")),
            outcome: "ok"
        });
    }

    /** A seal or verification refused from the page that failed on: the pages it left unproven, and why (ids and numbers only). */
    #recordRefusal(pages: readonly PageId[], generation: number, why: string): void {
        const owner = pages.length > 0 ? this.#ledger.owners[pages[0]!] : undefined;
        this.#events.record({
            kind: "integrityRefused",
            workspace: owner?.workspace,
            requestId: owner?.holder,
            pages: [...pages],
            pageState: pages.length > 0 ? pageStateNames[this.#ledger.states[pages[0]!] as number] : undefined,
            generation,
            outcome: "refused",
            detail: why
        });
    }

    /**
     * Zeroes and frees those of the quarantined `pages` no lease holds any more: here, or, where
     * the page threads run and the pages are big enough to be worth a round trip, on them (the
     * pages stay quarantined, marked as zeroing, until the threads are done: nobody can take them
     * meanwhile). Returns the pages freed now and those being zeroed.
     */
    #scrubDrained(pages: readonly PageId[], owner: ScrubbedOwner | undefined, zeroNow = false): { freed: PageId[]; zeroing: PageId[] } {
        const ledger = this.#ledger;
        const drained = pages.filter((page) => this.#leases.policy.drain(page, ledger));
        for (const page of drained) {
            this.#begunSeals.forget(page);
        }
        const threads = this.#hasher;
        const scrubber = this.#scrubber;
        const scrubOffThread = scrubber.scrubOffThread?.bind(scrubber);
        if (
            zeroNow ||
            drained.length === 0 ||
            scrubOffThread === undefined ||
            threads === undefined ||
            threads.numThreadsRunning === 0 ||
            !threads.isWorthThreads(this.config.pageBytes)
        ) {
            for (const page of drained) {
                this.#free(page, scrubber.scrub(this.#arena, page));
            }
            return { freed: drained, zeroing: [] };
        }
        for (const page of drained) {
            ledger.zeroing[page] = 1;
        }
        this.#numPagesZeroing += drained.length;
        const settle = (zeroed: boolean): void => this.#afterZeroing(drained, zeroed, owner);
        scrubOffThread(this.#arena, drained, threads).then(settle, () => settle(false));
        return { freed: [], zeroing: drained };
    }

    /** Pages the threads zeroed go free; where they could not, they are scrubbed here first. */
    #afterZeroing(pages: readonly PageId[], zeroed: boolean, owner: ScrubbedOwner | undefined): void {
        if (this.#disposed) {
            return;
        }
        for (const page of pages) {
            this.#ledger.zeroing[page] = 0;
        }
        this.#numPagesZeroing -= pages.length;
        try {
            for (const page of pages) {
                this.#free(page, zeroed || this.#scrubber.scrub(this.#arena, page));
            }
            this.#events.record({ kind: "scrubbed", ...owner, pages: [...pages], pageState: "free", outcome: "ok" });
            this.#notifyFreed();
        } finally {
            if (this.#numPagesZeroing === 0) {
                this.#resolveZeroedWaiters(); // never left waiting, even where freeing broke an invariant (which throws on)
            }
        }
    }

    #free(page: PageId, zeroed: boolean): void {
        if (zeroed) {
            this.#counters.pagesScrubbed++;
        }
        this.#ledger.pushFree(page);
    }

    #resolveZeroedWaiters(): void {
        for (const resolve of this.#zeroedWaiters.splice(0)) {
            resolve();
        }
    }

    #notifyFreed(): void {
        for (const watcher of this.#freedWatchers) {
            watcher();
        }
    }

    /**
     * The checksums of `pages` up to the first that `refusal` refuses now (that one and those after
     * it are not hashed), computed off the engine's thread; undefined when the batch is too small
     * to be worth it, and the caller hashes inline. The caller checks every claim again afterwards.
     */
    async #hashOffThread(
        pages: readonly PageId[],
        refusal: (page: PageId, index: number) => CountedRefusal | undefined
    ): Promise<{ checksumOf(index: number): bigint } | undefined> {
        const ledger = this.#ledger;
        const numBytes = pages.reduce((sum, page) => sum + (ledger.numValidBytes[page] as number), 0);
        const hasher = this.#pageHasher();
        if (!hasher.isWorthThreads(numBytes)) {
            return undefined;
        }
        const firstRefused = pages.findIndex((page, index) => refusal(page, index) !== undefined);
        const toHash = firstRefused < 0 ? pages : pages.slice(0, firstRefused);
        const jobs = toHash.map((page) =>
            this.#arena.hashJob(page, ledger.numValidBytes[page] as number, ledger.tokenStarts[page] as number)
        );
        let checksums: bigint[];
        try {
            checksums = await hasher.hash(jobs);
        } catch (error) {
            this.#assertAlive("hash pages"); // disposed meanwhile: the pool's own error
            throw error;
        }
        return {
            checksumOf: (index) => {
                const job = jobs[index];
                invariant(
                    job !== undefined && job.numBytes === (ledger.numValidBytes[pages[index]!] as number),
                    () =>
                        `page ${pages[index]} (${index + 1} of ${pages.length}) passed its checks after the hash, but was not hashed as it is now`
                );
                return checksums[index]!;
            }
        };
    }

    /** Why `seal()` of the page is refused now, with the counter that refusal bumps; no side effect. */
    #sealRefusal(pageId: PageId, generation: number, numTokens: number): CountedRefusal | undefined {
        const ledger = this.#ledger;
        const refusal = ledger.claimRefusal(pageId, generation, "seal");
        if (refusal !== undefined) {
            return { error: refusal, counter: "staleSealsRefused" };
        }
        const state = ledger.states[pageId] as number;
        if (state === PageState.Sealed) {
            return {
                error: new PageStateError("page_already_sealed", pageId, generation, "seal", "sealed"),
                counter: "writesAfterSealRefused"
            };
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
        return undefined;
    }

    /** Whether the page is written at `generation`, its claim alive and no write lease on it: ready to seal. */
    #isFinished(pageId: PageId, generation: number): boolean {
        const ledger = this.#ledger;
        return (
            ledger.claimRefusal(pageId, generation, "seal") === undefined &&
            ledger.states[pageId] === PageState.Written &&
            ledger.writeLeased[pageId] === 0
        );
    }

    #applySeal(pageId: PageId, numTokens: number, checksum: bigint): void {
        const ledger = this.#ledger;
        ledger.tokenEnds[pageId] = (ledger.tokenStarts[pageId] as number) + numTokens;
        ledger.checksums[pageId] = checksum;
        ledger.setState(pageId, PageState.Sealed);
    }

    /** Why `verify()` of the page is refused now, with the counter that refusal bumps; no side effect. */
    #verifyRefusal(pageId: PageId, generation: number): CountedRefusal | undefined {
        const refusal = this.#ledger.claimRefusal(pageId, generation, "verify");
        if (refusal !== undefined) {
            return { error: refusal, counter: "staleSealsRefused" };
        }
        const state = this.#ledger.states[pageId] as number;
        if (state !== PageState.Sealed) {
            return {
                error: new PageStateError("page_not_sealed", pageId, generation, "verify", pageStateName(state)),
                counter: "readsBeforeSealRefused"
            };
        }
        return undefined;
    }

    #compareChecksum(pageId: PageId, generation: number, actual: bigint): VerifyResult {
        const sealed = this.#ledger.checksums[pageId] as bigint;
        if (actual !== sealed) {
            this.#counters.checksumFailures++;
            return { ok: false, error: new ChecksumMismatchError(pageId, generation, sealed, actual) };
        }
        return { ok: true, checksum: actual };
    }

    #counted(refusal: CountedRefusal): PageAccessRefusal {
        this.#counters[refusal.counter]++;
        return refusal.error;
    }

    #pageHasher(): PageHasher {
        this.#hasher ??= new PageHasher(this.#arena.shared);
        return this.#hasher;
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
