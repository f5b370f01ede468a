import type { PageId, RequestId, WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { KvLayout } from "../codec/KvLayout.js";
import type { ParsedSequenceState } from "../codec/parseSequenceState.js";
import { assembleSequenceState, numPagesFor, scatterStateToPages, type PageBlockAccess } from "../codec/statePages.js";
import type { PageReadLease, PageWriteLease } from "../pages/PageLease.js";
import type { PagePool } from "../pages/PagePool.js";
import type { Reservation, ReservationRef } from "../pages/Reservation.js";
import type { PageManifest } from "./PageManifest.js";
import { allHandoffChecks, verifyManifest, type HandoffChecks } from "./verifyManifest.js";

export interface PageTransferHooks {
    /** After the write leases are taken, before the bytes are written: a slow transport. */
    beforeTransferWrite?(request: RequestId): Promise<void>;
    /** The manifest as sealed; what it returns is what the reader receives. */
    afterSeal?(manifest: PageManifest, pool: PagePool): PageManifest | void;
    /** After a verified state was loaded into its target sequence, with the tokens it holds now. */
    afterLoad?(request: RequestId, tokens: readonly number[]): void;
    /** How many of a transfer's pages, from the first, the transport delivers (all when absent); a drill drops the rest (failure modes 1, 14). */
    pagesDelivered?(reservation: Reservation, numPages: number): number;
    /** Completions that reach this transfer's reader before its own: late or duplicate ones of earlier transfers (failure mode 7). */
    earlierArrivals?(own: PageManifest): readonly PageManifest[] | void;
}

/** Counts the transfers keep, in the engine's counters. */
export interface PageTransferCounters {
    /** Late or duplicate completions a reader ignored by their generation tag. */
    staleCompletionsIgnored: number;
}

/** Where the pages go: a context's measured layout and stream count. */
export interface TransferTarget {
    readonly layout: KvLayout;
    readonly numStreams: number;
}

/**
 * Moves one sequence's KV through the pool: written and sealed under the reservation's generation,
 * described by a manifest, verified in full before a byte is assembled for the reader
 * (ARCHITECTURE.md, handoff steps 2–5). Used for prefill→decode handoffs and for swapping
 * workspaces out of the decode context and back.
 */
export class PageTransfer {
    constructor(
        private readonly pool: PagePool,
        private readonly layout: KvLayout,
        readonly layoutFingerprint: string,
        private readonly hooks: PageTransferHooks,
        private readonly checks: HandoffChecks = allHandoffChecks,
        private readonly counters: PageTransferCounters = { staleCompletionsIgnored: 0 }
    ) {}

    numPagesFor(numTokens: number): number {
        return numPagesFor(numTokens, this.pool.config.pageTokens);
    }

    /**
     * Writes `state` into the reservation's pages, seals them, and returns the completion the
     * reader takes. A request cancelled during the slow part has had its pages released, and its
     * late write is refused by the pool, never applied.
     *
     * The reservation is sized by what the reader expects. A state that is shorter (a prefill that
     * handed over less than the request needs), or pages the transport drops, leave pages
     * unwritten and unlisted: the reader's page count check refuses the manifest.
     */
    async write(reservation: Reservation, state: ParsedSequenceState): Promise<PageManifest> {
        const { pageTokens } = this.pool.config;
        const numStatePages = this.numPagesFor(state.numCells);
        invariant(
            numStatePages <= reservation.pages.length,
            () =>
                `${state.numCells} tokens need ${numStatePages} pages; reservation ${reservation.generation} has ${reservation.pages.length}`
        );
        const numDelivered = Math.max(0, Math.min(numStatePages, this.hooks.pagesDelivered?.(reservation, numStatePages) ?? numStatePages));
        const delivered = reservation.pages.slice(0, numDelivered);
        const writeLeases: PageWriteLease[] = [];
        try {
            for (const handle of delivered) {
                const leased = this.pool.acquireWriteLease(handle.pageId, handle.generation);
                if (!leased.ok) {
                    throw leased.error;
                }
                writeLeases.push(leased.lease);
            }
            await this.hooks.beforeTransferWrite?.(reservation.request);
            scatterStateToPages(state, leaseWriter(writeLeases, numStatePages), pageTokens);
        } finally {
            for (const lease of writeLeases) {
                lease.release();
            }
        }
        const checksums = delivered.map((handle, index) => {
            const sealed = this.pool.seal(handle.pageId, handle.generation, Math.min(pageTokens, state.numCells - index * pageTokens));
            if (!sealed.ok) {
                throw sealed.error;
            }
            return sealed.checksum;
        });
        const manifest: PageManifest = {
            request: reservation.request,
            workspace: reservation.workspace,
            generation: reservation.generation,
            pages: delivered.map((handle) => handle.pageId),
            tokens: Array.from(state.tokens),
            layoutFingerprint: this.layoutFingerprint,
            checksums
        };
        const received = this.hooks.afterSeal?.(manifest, this.pool) ?? manifest;
        return this.#receive([...(this.hooks.earlierArrivals?.(manifest) ?? []), received], reservation);
    }

    /**
     * The completion the reader takes, of those that reached it in this order (the last arrived as
     * this transfer's own): the first tagged with its own (request, generation). Every one before
     * it is a late or duplicate completion of a transfer whose pages may have been reused since:
     * ignored and counted, changing nothing (failure mode 7). When none carries its tag, the last
     * goes on to verification, which refuses it with its integrity error.
     */
    #receive(arrivals: readonly PageManifest[], own: ReservationRef): PageManifest {
        if (!this.checks.generations) {
            return arrivals[0]!;
        } // drill only: named by handle alone, the first completion to arrive is taken
        const index = arrivals.findIndex((arrival) => arrival.request === own.request && arrival.generation === own.generation);
        const taken = index < 0 ? arrivals.length - 1 : index;
        this.counters.staleCompletionsIgnored += taken;
        return arrivals[taken]!;
    }

    /**
     * Verifies `manifest` against what the reader expects and assembles the state for `target`.
     * Throws the handoff's integrity error, having assembled nothing, when any check fails.
     */
    read(
        manifest: PageManifest,
        expected: {
            request: RequestId;
            workspace: WorkspaceId;
            generation: number;
            tokens: readonly number[];
            /** The pages the reader reserved for `tokens`, in token order. Read only by the drill that switches the page count check off. */
            reservedPages?: readonly PageId[];
        },
        target: TransferTarget
    ): Buffer {
        const integrityError = verifyManifest(
            manifest,
            {
                request: expected.request,
                workspace: expected.workspace,
                generation: expected.generation,
                layoutFingerprint: this.layoutFingerprint,
                numTokens: expected.tokens.length
            },
            this.pool,
            this.checks
        );
        if (integrityError !== undefined) {
            throw integrityError;
        }
        invariant(
            !this.checks.ownership || manifest.tokens.every((token, index) => token === expected.tokens[index]),
            () => `the verified manifest of request ${expected.request} lists other tokens than the ${expected.tokens.length} expected`
        );
        if (
            !this.checks.pageCount &&
            expected.reservedPages !== undefined &&
            manifest.pages.length < this.numPagesFor(expected.tokens.length)
        ) {
            return this.#readOverReservation(manifest, expected.tokens, expected.reservedPages, target);
        }

        const readLeases: PageReadLease[] = [];
        try {
            this.#leaseManifestPages(manifest, readLeases);
            return assembleSequenceState({
                tokens: manifest.tokens,
                layout: this.layout,
                targetLayout: target.layout,
                targetNumStreams: target.numStreams,
                pages: leaseReader(readLeases),
                pageTokens: this.pool.config.pageTokens
            });
        } finally {
            for (const lease of readLeases) {
                lease.release();
            }
        }
    }

    /** Read leases on every page of `manifest`, pushed onto `leases` as taken, so the caller's `finally` releases them even when one is refused. */
    #leaseManifestPages(manifest: PageManifest, leases: PageReadLease[]): void {
        for (const page of manifest.pages) {
            const leased = this.pool.acquireReadLease(page, this.#generationToRead(manifest, page));
            if (!leased.ok) {
                throw leased.error;
            }
            leases.push(leased.lease);
        }
    }

    /** The generation a page is read at: the manifest's, or, in a drill without generation tags, whatever the page is at now. */
    #generationToRead(manifest: PageManifest, page: PageId): number {
        return this.checks.generations ? manifest.generation : this.pool.pageInfo(page).generation;
    }

    /**
     * Drill only (page count check off): what the 2026 incident's decode did. It computes over
     * every page it reserved for the tokens it expects, the manifest's and the ones it never
     * received, whose bytes are whatever they held before: zero when the pool scrubbed them,
     * another request's KV when it did not.
     */
    #readOverReservation(
        manifest: PageManifest,
        tokens: readonly number[],
        reservedPages: readonly PageId[],
        target: TransferTarget
    ): Buffer {
        const numPages = this.numPagesFor(tokens.length);
        invariant(
            reservedPages.length >= numPages,
            () => `${tokens.length} tokens need ${numPages} pages; the reader reserved ${reservedPages.length}`
        );
        const readLeases: PageReadLease[] = [];
        try {
            this.#leaseManifestPages(manifest, readLeases);
            const unreceived = reservedPages.slice(manifest.pages.length, numPages).map((page) => this.pool.inspectRawPage(page));
            return assembleSequenceState({
                tokens,
                layout: this.layout,
                targetLayout: target.layout,
                targetNumStreams: target.numStreams,
                pages: {
                    numPages,
                    write() {
                        throw new Error("a reader does not write");
                    },
                    read: (pageIndex, pageOffset, numBytes) =>
                        pageIndex < readLeases.length
                            ? readLeases[pageIndex]!.read(pageOffset, numBytes)
                            : unreceived[pageIndex - readLeases.length]!.subarray(pageOffset, pageOffset + numBytes)
                },
                pageTokens: this.pool.config.pageTokens
            });
        } finally {
            for (const lease of readLeases) {
                lease.release();
            }
        }
    }
}

/** Writes through the leases of the delivered pages; blocks of the pages past them are dropped, as a lossy transport would. */
function leaseWriter(leases: readonly PageWriteLease[], numPages: number): PageBlockAccess {
    return {
        numPages,
        write(pageIndex, pageOffset, bytes) {
            if (pageIndex >= leases.length) {
                return;
            }
            const written = leases[pageIndex]!.write(pageOffset, bytes);
            if (!written.ok) {
                throw written.error;
            }
        },
        read() {
            throw new Error("a write lease does not read");
        }
    };
}

function leaseReader(leases: readonly PageReadLease[]): PageBlockAccess {
    return {
        numPages: leases.length,
        write() {
            throw new Error("a read lease does not write");
        },
        read: (pageIndex, pageOffset, numBytes) => leases[pageIndex]!.read(pageOffset, numBytes)
    };
}
