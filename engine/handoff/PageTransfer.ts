import type { RequestId, SessionId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { KvLayout } from "../codec/KvLayout.js";
import type { ParsedSequenceState } from "../codec/parseSequenceState.js";
import { assembleSequenceState, numPagesFor, scatterStateToPages, type PageBlockAccess } from "../codec/statePages.js";
import type { PageReadLease, PageWriteLease } from "../pages/PageLease.js";
import type { PagePool } from "../pages/PagePool.js";
import type { Reservation } from "../pages/Reservation.js";
import type { PageManifest } from "./PageManifest.js";
import { allHandoffChecks, verifyManifest, type HandoffChecks } from "./verifyManifest.js";

export interface PageTransferHooks {
    /** After the write leases are taken, before the bytes are written: a slow transport. */
    beforeTransferWrite?(request: RequestId): Promise<void>;
    /** The manifest as sealed; what it returns is what the reader receives. */
    afterSeal?(manifest: PageManifest, pool: PagePool): PageManifest | void;
    /** After a verified state was loaded into its target sequence, with the tokens it holds now. */
    afterLoad?(request: RequestId, tokens: readonly number[]): void;
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
 * sessions out of the decode context and back.
 */
export class PageTransfer {
    constructor(
        private readonly pool: PagePool,
        private readonly layout: KvLayout,
        readonly layoutFingerprint: string,
        private readonly hooks: PageTransferHooks,
        private readonly checks: HandoffChecks = allHandoffChecks
    ) {}

    numPagesFor(numTokens: number): number {
        return numPagesFor(numTokens, this.pool.config.pageTokens);
    }

    /**
     * Writes `state` into the reservation's pages and seals them. `isLive` is asked after the
     * slow part: a request cancelled meanwhile has had its pages released, and its late write is
     * refused by the pool, never applied.
     */
    async write(reservation: Reservation, state: ParsedSequenceState): Promise<PageManifest> {
        const { pageTokens } = this.pool.config;
        invariant(reservation.pages.length === this.numPagesFor(state.numCells),
            () => `${state.numCells} tokens need ${this.numPagesFor(state.numCells)} pages; reservation ${reservation.generation} has ${reservation.pages.length}`);
        const writeLeases: PageWriteLease[] = [];
        try {
            for (const handle of reservation.pages) {
                const leased = this.pool.acquireWriteLease(handle.pageId, handle.generation);
                if (!leased.ok)
                    throw leased.error;
                writeLeases.push(leased.lease);
            }
            await this.hooks.beforeTransferWrite?.(reservation.request);
            scatterStateToPages(state, leaseWriter(writeLeases), pageTokens);
        } finally {
            for (const lease of writeLeases)
                lease.release();
        }
        const checksums = reservation.pages.map((handle, index) => {
            const sealed = this.pool.seal(handle.pageId, handle.generation, Math.min(pageTokens, state.numCells - index * pageTokens));
            if (!sealed.ok)
                throw sealed.error;
            return sealed.checksum;
        });
        const manifest: PageManifest = {
            request: reservation.request,
            session: reservation.session,
            generation: reservation.generation,
            pages: reservation.pages.map((handle) => handle.pageId),
            tokens: Array.from(state.tokens),
            layoutFingerprint: this.layoutFingerprint,
            checksums
        };
        return this.hooks.afterSeal?.(manifest, this.pool) ?? manifest;
    }

    /**
     * Verifies `manifest` against what the reader expects and assembles the state for `target`.
     * Throws the handoff's integrity error, having assembled nothing, when any check fails.
     */
    read(manifest: PageManifest, expected: { request: RequestId; session: SessionId; generation: number; tokens: readonly number[] }, target: TransferTarget): Buffer {
        const integrityError = verifyManifest(manifest, {
            request: expected.request,
            session: expected.session,
            generation: expected.generation,
            layoutFingerprint: this.layoutFingerprint,
            numTokens: expected.tokens.length
        }, this.pool, this.checks);
        if (integrityError !== undefined)
            throw integrityError;
        invariant(!this.checks.ownership || manifest.tokens.every((token, index) => token === expected.tokens[index]),
            () => `the verified manifest of request ${expected.request} lists other tokens than the ${expected.tokens.length} expected`);

        const readLeases: PageReadLease[] = [];
        try {
            for (const page of manifest.pages) {
                const leased = this.pool.acquireReadLease(page, manifest.generation);
                if (!leased.ok)
                    throw leased.error;
                readLeases.push(leased.lease);
            }
            return assembleSequenceState({
                tokens: manifest.tokens,
                layout: this.layout,
                targetLayout: target.layout,
                targetNumStreams: target.numStreams,
                pages: leaseReader(readLeases),
                pageTokens: this.pool.config.pageTokens
            });
        } finally {
            for (const lease of readLeases)
                lease.release();
        }
    }
}

function leaseWriter(leases: readonly PageWriteLease[]): PageBlockAccess {
    return {
        numPages: leases.length,
        write(pageIndex, pageOffset, bytes) {
            const written = leases[pageIndex]!.write(pageOffset, bytes);
            if (!written.ok)
                throw written.error;
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
