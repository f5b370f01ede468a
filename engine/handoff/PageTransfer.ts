import type { PageHolder, RequestId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import { StateFormatError, StateLayoutMismatchError } from "../codec/codecErrors.js";
import { describeLayoutMismatch, type KvLayout } from "../codec/KvLayout.js";
import { parseSequenceStateMeta, type ParsedSequenceState } from "../codec/parseSequenceState.js";
import {
    assembleSequenceStateChunks,
    numPagesFor,
    planStateTarget,
    scatterRangeToPages,
    type PageBlockAccess,
    type PageChecks,
    type StateChunks,
    type StateTarget
} from "../codec/statePages.js";
import { TimeSlices } from "../core/TimeSlices.js";
import type { PageReadLease, PageWriteLease } from "../pages/PageLease.js";
import type { PagePool } from "../pages/PagePool.js";
import type { PageHandle, Reservation, ReservationRef } from "../pages/Reservation.js";
import type { PageManifest } from "./PageManifest.js";
import type { StateSource } from "./StateSource.js";
import { verifyingReader, type ReadExpectation, type TransferReader } from "./TransferReader.js";
import { verifyRecomputed, type ManifestExpectation } from "./verifyManifest.js";

export interface PageTransferHooks {
    /** After the write leases are taken, before the bytes are written: a slow transport. */
    beforeTransferWrite?(holder: PageHolder): Promise<void>;
    /** The manifest as sealed; what it returns is what the reader receives. */
    afterSeal?(manifest: PageManifest, pool: PagePool): PageManifest | void;
    /** After a verified state was loaded into its target sequence, with the tokens it holds now. */
    afterLoad?(request: RequestId, tokens: readonly number[]): void;
    /** How many of a transfer's pages, from the first, the transport delivers (all when absent); a drill drops the rest: dropped pages. */
    pagesDelivered?(reservation: Reservation, numPages: number): number;
    /** Completions that reach this transfer's reader before its own, late or duplicate ones of earlier transfers: replayed completions. */
    earlierArrivals?(own: PageManifest): readonly PageManifest[] | void;
}

/** Counts the transfers keep, in the engine's counters. */
export interface PageTransferCounters {
    /** Late or duplicate completions a reader ignored by their generation tag. */
    staleCompletionsIgnored: number;
    /** Transfers whose state llama.cpp saved straight into the pages. */
    statesSavedIntoPages: number;
}

/** Where the pages go: a context's measured layout and stream count, and whether it verifies pages as it loads them. */
export interface TransferTarget {
    readonly layout: KvLayout;
    readonly numStreams: number;
    /** `RoleContext.verifiesPagesOnLoad`: the checksums recomputed as llama.cpp reads the pages, in the load's own job. */
    readonly verifiesPagesOnLoad?: boolean;
}

/**
 * Longest a transfer's write holds the engine's thread between two turns of its event loop (ms):
 * the scatter goes a layer of a page at a time and the seal of small pages a page at a time (big
 * ones are hashed off the thread, `PagePool.beginSeal`), so that streams decoding beside a long prompt's
 * handoff get their tokens and start their next steps in between. In one piece, a
 * long prompt's KV held the thread for tens of milliseconds, and every stream's next step waited for
 * it (docs/measurements.md).
 */
export const TRANSFER_SLICE_MS = 2;

/**
 * Moves one sequence's KV through the pool: written and sealed under the reservation's generation,
 * described by a manifest, verified in full before a byte is assembled for the reader
 * (docs/ARCHITECTURE.md, handoff steps 2–5). Used for prefill→decode handoffs and for swapping
 * workspaces out of the decode context and back. What the reader checks is its `reader` policy.
 */
export class PageTransfer {
    constructor(
        private readonly pool: PagePool,
        private readonly layout: KvLayout,
        readonly layoutFingerprint: string,
        private readonly hooks: PageTransferHooks,
        private readonly counters: PageTransferCounters = { staleCompletionsIgnored: 0, statesSavedIntoPages: 0 },
        private readonly reader: TransferReader = verifyingReader,
        /** See `TRANSFER_SLICE_MS`; 0 gives the loop back between every two layers and before every seal. */
        private readonly sliceBudgetMs: number = TRANSFER_SLICE_MS
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
        const slices = new TimeSlices(this.sliceBudgetMs);
        const numTokens = state.tokens.length; // the codec checked the state holds one position per token
        const numStatePages = this.#numStatePagesIn(reservation, numTokens);
        const numDelivered = Math.max(0, Math.min(numStatePages, this.hooks.pagesDelivered?.(reservation, numStatePages) ?? numStatePages));
        const delivered = reservation.pages.slice(0, numDelivered);
        const writeLeases: PageWriteLease[] = [];
        try {
            this.#leaseForWriting(delivered, writeLeases);
            await this.hooks.beforeTransferWrite?.(reservation.holder);
            const writer = leaseWriter(writeLeases, numStatePages);
            const numLayers = state.layout.layers.length;
            // A page at a time, so that each page's checksum is computed off the thread while the next is written.
            for (let page = 0; page < numStatePages; page++) {
                for (let layer = 0; layer < numLayers; layer++) {
                    if (page > 0 || layer > 0) {
                        await slices.pause(); // between two pieces, never after the last: a short write pauses not at all
                    }
                    // a request cancelled during a pause has released its pages: this write is refused
                    scatterRangeToPages(state, writer, pageTokens, {
                        firstLayer: layer,
                        endLayer: layer + 1,
                        firstPage: page,
                        endPage: page + 1
                    });
                }
                const finished = writeLeases[page];
                if (finished !== undefined) {
                    finished.release();
                    void this.pool.beginSeal(finished.pageId, finished.generation); // never rejects; sealPages awaits the checksum
                }
            }
        } finally {
            for (const lease of writeLeases) {
                lease.release();
            }
        }
        return this.#seal(reservation, delivered, state.tokens, slices);
    }

    /**
     * `write` for a sequence's state: saved by llama.cpp straight into the reservation's pages where
     * its context can (one copy, no buffer of the state's size, the engine's thread free while it
     * copies), else exported whole and written as `write` does. A transposed V takes the second way
     * too: it is a run per element of every layer of every page (for a real model's long prompt,
     * far more views than blocks), more work on the engine's thread than the copy it would save; so do
     * drills that drop a transfer's pages (`pagesDelivered`).
     */
    async writeFrom(reservation: Reservation, source: StateSource): Promise<PageManifest> {
        const { saveInto, numStreams, numTokens } = source;
        const inPlace =
            saveInto !== undefined &&
            numStreams !== undefined &&
            numTokens > 0 &&
            !this.layout.vTransposed &&
            this.hooks.pagesDelivered === undefined;
        if (inPlace) {
            const manifest = await this.#writeInPlace(reservation, numTokens, numStreams, saveInto);
            if (manifest !== undefined) {
                return manifest;
            }
        }
        const state = await source.exportWhole();
        try {
            return await this.write(reservation, state);
        } finally {
            state.release(); // its bytes are in the pages now
        }
    }

    /**
     * The state of `numTokens` positions saved into the pages as `planStateTarget` plans it, under
     * the pages' write leases (which keep them from being scrubbed or reused while llama.cpp writes
     * them), then checked against the plan: its metadata must parse, with the layout of these pages
     * and one cell per planned token, or nothing is recorded and the request fails. Undefined, with
     * nothing written, when the state was not the size planned.
     */
    async #writeInPlace(
        reservation: Reservation,
        numTokens: number,
        numStreams: number,
        saveInto: (target: StateTarget) => Promise<boolean>
    ): Promise<PageManifest | undefined> {
        const { pageTokens } = this.pool.config;
        const numStatePages = this.#numStatePagesIn(reservation, numTokens);
        const pages = reservation.pages.slice(0, numStatePages);
        const writeLeases: PageWriteLease[] = [];
        let tokens: Int32Array;
        try {
            this.#leaseForWriting(pages, writeLeases);
            const targetOf = (pageIndex: number, pageOffset: number, numBytes: number): Uint8Array => {
                const targeted = writeLeases[pageIndex]!.target(pageOffset, numBytes);
                if (!targeted.ok) {
                    throw targeted.error;
                }
                return targeted.bytes;
            };
            const planned = planStateTarget(numTokens, this.layout, numStreams, pageTokens, targetOf);
            // each page hashed as llama.cpp writes it, for its seal: no second pass over the pages
            const target: StateTarget = {
                ...planned,
                pageHashes: {
                    pages: planned.numValidBytesByPage.map((numBytes, index) => targetOf(index, 0, numBytes)),
                    seeds: BigUint64Array.from(pages, (handle) => BigInt(this.pool.pageInfo(handle.pageId).tokenStart)),
                    checksums: new BigUint64Array(pages.length)
                }
            };
            // a slow transport: llama.cpp holds the pages' addresses from here, whatever happens to the request meanwhile
            await this.hooks.beforeTransferWrite?.(reservation.holder);
            if (!(await saveInto(target))) {
                return undefined;
            }
            // a request cancelled during the save has released its pages: recording the write is refused
            const meta = parseSequenceStateMeta(target.meta);
            const mismatch = describeLayoutMismatch(this.layout, meta.layout);
            if (mismatch !== undefined) {
                throw new StateLayoutMismatchError(mismatch);
            }
            if (meta.numCells !== numTokens) {
                throw new StateFormatError(`the state saved into pages holds ${meta.numCells} cells, ${numTokens} were planned`, 8);
            }
            tokens = meta.tokens;
            writeLeases.forEach((lease, index) => {
                const numBytes = target.numValidBytesByPage[index]!;
                const recorded = lease.recordWritten(numBytes);
                if (!recorded.ok) {
                    throw recorded.error;
                }
                lease.release();
                this.pool.beginSealWith(lease.pageId, lease.generation, {
                    numBytes,
                    tokenStart: Number(target.pageHashes!.seeds[index]),
                    checksum: target.pageHashes!.checksums[index]!
                });
            });
            this.counters.statesSavedIntoPages++;
        } finally {
            for (const lease of writeLeases) {
                lease.release();
            }
        }
        // every page was hashed as it was written: the seal takes those checksums
        return this.#seal(reservation, pages, tokens, new TimeSlices(this.sliceBudgetMs));
    }

    /** Seals the written pages (big ones begun off the engine's thread, small ones here, a page a slice) and returns the completion the reader takes. */
    async #seal(reservation: Reservation, delivered: readonly PageHandle[], tokens: Int32Array, slices: TimeSlices): Promise<PageManifest> {
        const { pageTokens } = this.pool.config;
        const numTokens = tokens.length;
        const sealed = await this.pool.sealPages(
            delivered.map((handle, index) => ({ pageId: handle.pageId, numTokens: Math.min(pageTokens, numTokens - index * pageTokens) })),
            reservation.generation,
            () => slices.pause()
        );
        if (!sealed.ok) {
            throw sealed.error;
        }
        const manifest: PageManifest = {
            holder: reservation.holder,
            workspace: reservation.workspace,
            generation: reservation.generation,
            pages: delivered.map((handle) => handle.pageId),
            tokens: Array.from(tokens),
            layoutFingerprint: this.layoutFingerprint,
            checksums: [...sealed.checksums]
        };
        const received = this.hooks.afterSeal?.(manifest, this.pool) ?? manifest;
        return this.#receive([...(this.hooks.earlierArrivals?.(manifest) ?? []), received], reservation);
    }

    /** Pages a state of `numTokens` fills; more than the reservation holds is a bug (the reader sized it). */
    #numStatePagesIn(reservation: Reservation, numTokens: number): number {
        const numStatePages = this.numPagesFor(numTokens);
        invariant(
            numStatePages <= reservation.pages.length,
            () => `${numTokens} tokens need ${numStatePages} pages; reservation ${reservation.generation} has ${reservation.pages.length}`
        );
        return numStatePages;
    }

    /** Takes a write lease on each page into `leases` (which the caller releases, however this ends); throws the first refusal. */
    #leaseForWriting(pages: readonly PageHandle[], leases: PageWriteLease[]): void {
        for (const handle of pages) {
            const leased = this.pool.acquireWriteLease(handle.pageId, handle.generation);
            if (!leased.ok) {
                throw leased.error;
            }
            leases.push(leased.lease);
        }
    }

    /**
     * The completion the reader takes, of those that reached it in this order (the last arrived as
     * this transfer's own), as its reader policy chooses. Every one before it is a late or
     * duplicate completion of a transfer whose pages may have been reused since: ignored and
     * counted, changing nothing (replayed completion; docs/FAILURE-MODES.md).
     */
    #receive(arrivals: readonly PageManifest[], own: ReservationRef): PageManifest {
        const taken = this.reader.take(arrivals, own);
        this.counters.staleCompletionsIgnored += taken;
        return arrivals[taken]!;
    }

    /**
     * Verifies `manifest` against what the reader expects, then hands `load` the state assembled
     * for `target` as chunks that view the pages (`StateChunks`), holding the read leases until
     * `load` settles, so no page can be scrubbed or reused under the views. Throws the handoff's
     * integrity error, having assembled nothing and called nothing, when any check fails.
     *
     * Where the target verifies pages as it loads them (V in rows, the verifying reader), every check
     * but the checksums is made first, and the checksums are recomputed as llama.cpp reads the pages,
     * in the load's own native job, which erases the sequence on a mismatch before anything can
     * decode over it: one pass over the bytes instead of two. Their integrity error is thrown then,
     * once the load is done.
     */
    async load(
        manifest: PageManifest,
        expected: ReadExpectation,
        target: TransferTarget,
        load: (state: StateChunks) => Promise<void>
    ): Promise<void> {
        const readLeases: PageReadLease[] = [];
        const expectation: ManifestExpectation = {
            holder: expected.holder,
            workspace: expected.workspace,
            generation: expected.generation,
            layoutFingerprint: this.layoutFingerprint,
            numTokens: expected.tokens.length
        };
        const verifiesOnLoad =
            target.verifiesPagesOnLoad === true && !this.layout.vTransposed && this.reader.verifyBeforeLoad !== undefined;
        try {
            const integrityError = verifiesOnLoad
                ? this.reader.verifyBeforeLoad!(manifest, expectation, this.pool)
                : await this.reader.verify(manifest, expectation, this.pool);
            if (integrityError !== undefined) {
                throw integrityError;
            }
            const assembled = this.#assemble(manifest, expected, target, readLeases);
            if (!verifiesOnLoad) {
                await load(assembled);
                return;
            }
            const pageChecks = this.#pageChecksOf(manifest, readLeases, assembled.chunkPages);
            await load({ ...assembled, pageChecks });
            const recomputedError = await verifyRecomputed(manifest, expectation.generation, Array.from(pageChecks.recomputed), this.pool);
            if (recomputedError !== undefined) {
                throw recomputedError;
            }
        } finally {
            releaseAll(readLeases);
        }
    }

    #assemble(manifest: PageManifest, expected: ReadExpectation, target: TransferTarget, readLeases: PageReadLease[]): StateChunks {
        const { tokens, pages } = this.reader.assemblyOf(manifest, expected, this.pool, readLeases);
        return assembleSequenceStateChunks({
            tokens,
            layout: this.layout,
            targetLayout: target.layout,
            targetNumStreams: target.numStreams,
            pages,
            pageTokens: this.pool.config.pageTokens
        });
    }

    /** What a load that verifies the manifest's pages as it reads them is given: each page's valid bytes, seed and sealed checksum. */
    #pageChecksOf(manifest: PageManifest, readLeases: readonly PageReadLease[], chunkPages: Int32Array): PageChecks {
        invariant(
            readLeases.length === manifest.pages.length,
            () => `${readLeases.length} read leases for the ${manifest.pages.length} pages of a manifest to verify on load`
        );
        return {
            chunkPages,
            pages: readLeases.map((lease) => lease.view(0, lease.numValidBytes)),
            seeds: BigUint64Array.from(manifest.pages, (page) => BigInt(this.pool.pageInfo(page).tokenStart)),
            expected: BigUint64Array.from(manifest.checksums),
            recomputed: new BigUint64Array(manifest.pages.length)
        };
    }
}

function releaseAll(leases: readonly PageReadLease[]): void {
    for (const lease of leases) {
        lease.release();
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
        },
        view() {
            throw new Error("a write lease does not read");
        }
    };
}
