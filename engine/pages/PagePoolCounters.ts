/**
 * Monotonic event counts since the pool was created, for the isolation panel and `/metrics`.
 * "Stale" means the caller's claim on the page ended: its generation is not the page's, the page
 * went back to the free list, or its owner released it. Refusals leave every byte unchanged.
 */
export interface PagePoolCounters {
    readonly numReservations: number;
    readonly numPagesReserved: number;
    readonly numReleases: number;
    /** Write leases and writes refused because the claim was stale (late write after cancel, replayed completion). */
    readonly staleWritesRefused: number;
    /** Read leases refused because the claim was stale (foreign manifest, replayed completion). */
    readonly staleReadsRefused: number;
    /** Seals and verifications refused because the claim was stale: late or duplicate completions. */
    readonly staleSealsRefused: number;
    /** Read leases refused on pages not yet sealed (read before ready). */
    readonly readsBeforeSealRefused: number;
    /** Write leases and second seals refused on pages already sealed. */
    readonly writesAfterSealRefused: number;
    /** Writes past `pageBytes` and reads past the valid length; each also throws (over-read). */
    readonly outOfBoundsRefused: number;
    /** Releases of a reservation already released or never made (double release). */
    readonly doubleReleasesDetected: number;
    /** Verifications whose recomputed checksum differed from the sealed one (flipped byte). */
    readonly checksumFailures: number;
    readonly pagesScrubbed: number;
    /** Bytes flipped on purpose by fault drills. */
    readonly faultsInjected: number;
}

export type MutablePagePoolCounters = { -readonly [K in keyof PagePoolCounters]: number };

export function createPagePoolCounters(): MutablePagePoolCounters {
    return {
        numReservations: 0,
        numPagesReserved: 0,
        numReleases: 0,
        staleWritesRefused: 0,
        staleReadsRefused: 0,
        staleSealsRefused: 0,
        readsBeforeSealRefused: 0,
        writesAfterSealRefused: 0,
        outOfBoundsRefused: 0,
        doubleReleasesDetected: 0,
        checksumFailures: 0,
        pagesScrubbed: 0,
        faultsInjected: 0
    };
}
