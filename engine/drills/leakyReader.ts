import { numPagesFor } from "../codec/statePages.js";
import type { PageId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { HandoffIntegrityError } from "../handoff/integrityErrors.js";
import type { PageManifest } from "../handoff/PageManifest.js";
import {
    leaseManifestPages,
    leaseReader,
    verifyingReader,
    type Assembly,
    type ReadExpectation,
    type TransferReader
} from "../handoff/TransferReader.js";
import {
    checkIdentity,
    checkLayout,
    checkPageChecksum,
    checkPageCount,
    checkPageOwner,
    type ManifestExpectation
} from "../handoff/verifyManifest.js";
import type { PageReadLease } from "../pages/PageLease.js";
import type { PagePool } from "../pages/PagePool.js";
import type { ReservationRef } from "../pages/Reservation.js";

/** The reader's guards a drill can switch off. */
export type ReaderCheck =
    /** Request, workspace, generation and layout of the manifest, and every page's owner, state and positions. */
    | "ownership"
    /** ⌈tokens / pageTokens⌉ pages and checksums, and the token count decode expects. */
    | "pageCount"
    | "checksums"
    /**
     * Completions and pages are named by (holder, generation). Off, a reader takes the first
     * completion delivered to it and names pages by their id alone, whatever generation they are at now.
     */
    | "generations";

/**
 * `verifyingReader` with the checks in `off` switched off, for a fault drill's sandbox only: the
 * same checks, in the same order, minus those. With the page count check off, a manifest shorter
 * than what the reader reserved is read over the reservation, as the 2026 incident's decode did.
 */
export function leakyReader(off: readonly ReaderCheck[]): TransferReader {
    const on = (check: ReaderCheck): boolean => !off.includes(check);
    const generationOf = (manifest: PageManifest, page: PageId, pool: PagePool): number =>
        on("generations") ? manifest.generation : pool.pageInfo(page).generation;
    // The same checks in the same order as verifyManifest, one page at a time on this thread (a drill needs no speed).
    const verifyLeaky = (manifest: PageManifest, expected: ManifestExpectation, pool: PagePool): HandoffIntegrityError | undefined => {
        const failure =
            (on("ownership") ? (checkIdentity(manifest, expected) ?? checkLayout(manifest, expected)) : undefined) ??
            (on("pageCount") ? checkPageCount(manifest, expected, pool.config.pageTokens) : undefined);
        if (failure !== undefined) {
            return failure;
        }
        for (let index = 0; index < manifest.pages.length; index++) {
            const pageFailure =
                (on("ownership") ? checkPageOwner(manifest, index, expected, pool) : undefined) ??
                (on("checksums")
                    ? checkPageChecksum(manifest, index, generationOf(manifest, manifest.pages[index]!, pool), pool)
                    : undefined);
            if (pageFailure !== undefined) {
                return pageFailure;
            }
        }
        return undefined;
    };
    return {
        take(arrivals: readonly PageManifest[], own: ReservationRef): number {
            return on("generations") ? verifyingReader.take(arrivals, own) : 0; // by handle alone: the first to arrive
        },

        verify(manifest: PageManifest, expected: ManifestExpectation, pool: PagePool): Promise<HandoffIntegrityError | undefined> {
            return Promise.resolve(verifyLeaky(manifest, expected, pool));
        },

        assemblyOf(manifest: PageManifest, expected: ReadExpectation, pool: PagePool, leases: PageReadLease[]): Assembly {
            if (on("ownership")) {
                invariant(
                    manifest.tokens.every((token, index) => token === expected.tokens[index]),
                    () => `the verified manifest of ${expected.holder} lists other tokens than the ${expected.tokens.length} expected`
                );
            }
            leaseManifestPages(manifest, (page) => generationOf(manifest, page, pool), pool, leases);
            const numPages = numPagesFor(expected.tokens.length, pool.config.pageTokens);
            if (on("pageCount") || expected.reservedPages === undefined || manifest.pages.length >= numPages) {
                return { tokens: manifest.tokens, pages: leaseReader(leases) };
            }
            return overReservation(manifest, expected, expected.reservedPages, numPages, pool, leases);
        }
    };
}

/**
 * What the 2026 incident's decode did: it computes over every page it reserved for the tokens it
 * expects, the manifest's and the ones it never received, whose bytes are whatever they held
 * before: zero when the pool scrubbed them, another request's KV when it did not.
 */
function overReservation(
    manifest: PageManifest,
    expected: ReadExpectation,
    reservedPages: readonly PageId[],
    numPages: number,
    pool: PagePool,
    leases: readonly PageReadLease[]
): Assembly {
    invariant(
        reservedPages.length >= numPages,
        () => `${expected.tokens.length} tokens need ${numPages} pages; the reader reserved ${reservedPages.length}`
    );
    const unreceived = reservedPages.slice(manifest.pages.length, numPages).map((page) => pool.inspectRawPage(page));
    return {
        tokens: expected.tokens,
        pages: {
            numPages,
            write() {
                throw new Error("a reader does not write");
            },
            read: (pageIndex, pageOffset, numBytes) =>
                pageIndex < leases.length
                    ? leases[pageIndex]!.read(pageOffset, numBytes)
                    : unreceived[pageIndex - leases.length]!.subarray(pageOffset, pageOffset + numBytes),
            view: (pageIndex, pageOffset, numBytes) =>
                pageIndex < leases.length
                    ? leases[pageIndex]!.view(pageOffset, numBytes)
                    : unreceived[pageIndex - leases.length]!.subarray(pageOffset, pageOffset + numBytes)
        }
    };
}
