import type { PageBlockAccess } from "../codec/statePages.js";
import type { PageHolder, PageId, WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { PageReadLease } from "../pages/PageLease.js";
import type { PagePool } from "../pages/PagePool.js";
import type { ReservationRef } from "../pages/Reservation.js";
import type { HandoffIntegrityError } from "./integrityErrors.js";
import type { PageManifest } from "./PageManifest.js";
import { verifyManifest, verifyManifestClaims, type ManifestExpectation } from "./verifyManifest.js";

/** What the reader of a transfer expects: its own holder, workspace and generation, and the tokens it reserved for. */
export interface ReadExpectation {
    readonly holder: PageHolder;
    readonly workspace: WorkspaceId;
    readonly generation: number;
    readonly tokens: readonly number[];
    /** The pages the reader reserved for `tokens`, in token order (a handoff's reader reserves; a swap-in's does not). */
    readonly reservedPages?: readonly PageId[];
}

/** The state decode loads is assembled from these tokens' KV, read from these pages. */
export interface Assembly {
    readonly tokens: readonly number[];
    readonly pages: PageBlockAccess;
}

/**
 * How the reader's side of a transfer takes a completion and decides what it may load: the checks
 * that stand between a manifest and decode (the guards of docs/FAILURE-MODES.md). `PageTransfer`
 * receives one at construction: `verifyingReader` always, except in a fault drill's sandbox, whose
 * leaky readers live in engine/drills/.
 */
export interface TransferReader {
    /**
     * Of the completions that reached the reader, in arrival order (the last one its own transfer's,
     * as sent), the index of the one it takes; those before it are ignored and counted.
     */
    take(arrivals: readonly PageManifest[], own: ReservationRef): number;
    /** The first integrity failure of `manifest` against what the reader expects, as a value. */
    verify(manifest: PageManifest, expected: ManifestExpectation, pool: PagePool): Promise<HandoffIntegrityError | undefined>;
    /**
     * `verify` but the pages' checksums, which the load recomputes as it reads the pages and the
     * transfer checks afterwards (`verifyRecomputed`), for a target that verifies pages on load.
     * Absent where the reader must see every checksum before anything is assembled: a fault
     * drill's leaky readers, whose switched-off guard the load's own check would stand in for.
     */
    verifyBeforeLoad?(manifest: PageManifest, expected: ManifestExpectation, pool: PagePool): HandoffIntegrityError | undefined;
    /**
     * The tokens and page bytes to assemble, once `manifest` passed `verify`. Read leases it takes
     * go onto `leases` as they are taken, so the caller's `finally` releases every one.
     */
    assemblyOf(manifest: PageManifest, expected: ReadExpectation, pool: PagePool, leases: PageReadLease[]): Assembly;
}

/**
 * Completions and pages are named by (holder, generation): a reader takes the first completion
 * tagged with its own, verifies all of it (`verifyManifest`), and reads each page at the
 * manifest's generation, its leases refusing any page reused since.
 */
export const verifyingReader: TransferReader = Object.freeze({
    take(arrivals: readonly PageManifest[], own: ReservationRef): number {
        // When none carries its tag, the last goes on to verification, which refuses it with its integrity error.
        const index = arrivals.findIndex((arrival) => arrival.holder === own.holder && arrival.generation === own.generation);
        return index < 0 ? arrivals.length - 1 : index;
    },

    verify: verifyManifest,

    verifyBeforeLoad: verifyManifestClaims,

    assemblyOf(manifest: PageManifest, expected: ReadExpectation, pool: PagePool, leases: PageReadLease[]): Assembly {
        invariant(
            manifest.tokens.every((token, index) => token === expected.tokens[index]),
            () => `the verified manifest of ${expected.holder} lists other tokens than the ${expected.tokens.length} expected`
        );
        leaseManifestPages(manifest, () => manifest.generation, pool, leases);
        return { tokens: manifest.tokens, pages: leaseReader(leases) };
    }
});

/** Read leases on every page of `manifest`, each at `generationOf(page)`, pushed onto `leases` as taken; throws the first refusal. */
export function leaseManifestPages(
    manifest: PageManifest,
    generationOf: (page: PageId) => number,
    pool: PagePool,
    leases: PageReadLease[]
): void {
    for (const page of manifest.pages) {
        const leased = pool.acquireReadLease(page, generationOf(page));
        if (!leased.ok) {
            throw leased.error;
        }
        leases.push(leased.lease);
    }
}

/** The codec's page access over read leases, in token order. */
export function leaseReader(leases: readonly PageReadLease[]): PageBlockAccess {
    return {
        numPages: leases.length,
        write() {
            throw new Error("a read lease does not write");
        },
        read: (pageIndex, pageOffset, numBytes) => leases[pageIndex]!.read(pageOffset, numBytes),
        view: (pageIndex, pageOffset, numBytes) => leases[pageIndex]!.view(pageOffset, numBytes)
    };
}
