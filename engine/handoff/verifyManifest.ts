import type { PagePool } from "../pages/PagePool.js";
import { ChecksumMismatchError } from "../pages/pageErrors.js";
import type { PagesVerifyResult, VerifyResult } from "../pages/pagePoolResults.js";
import { PageState, pageStateName } from "../pages/PageState.js";
import { numPagesFor } from "../codec/statePages.js";
import type { PageHolder, WorkspaceId } from "../core/ids.js";
import {
    LayoutFingerprintMismatchError,
    PageChecksumMismatchError,
    PageCountMismatchError,
    PageOwnerMismatchError,
    PagePositionsError,
    type HandoffIntegrityError
} from "./integrityErrors.js";
import type { PageManifest } from "./PageManifest.js";

export interface ManifestExpectation {
    readonly holder: PageHolder;
    readonly workspace: WorkspaceId;
    readonly generation: number;
    readonly layoutFingerprint: string;
    readonly numTokens: number;
}

// Decode's checks, one function each, every one returning its failure as a value. `verifyManifest`
// runs them all; a fault drill's leaky reader (engine/drills/) runs all but the one it switches off.

/** The manifest names the reader's own holder (request or swap-out), workspace and generation. */
export function checkIdentity(manifest: PageManifest, expected: ManifestExpectation): HandoffIntegrityError | undefined {
    if (manifest.holder === expected.holder && manifest.workspace === expected.workspace && manifest.generation === expected.generation) {
        return undefined;
    }
    return new PageOwnerMismatchError(
        `the manifest is for ${manifest.holder} (workspace ${manifest.workspace}) at generation ${manifest.generation}; ` +
            `decode expected ${expected.holder} (workspace ${expected.workspace}) at generation ${expected.generation}`
    );
}

/** The pages were written for this decode context's KV layout and model. */
export function checkLayout(manifest: PageManifest, expected: ManifestExpectation): HandoffIntegrityError | undefined {
    return manifest.layoutFingerprint === expected.layoutFingerprint
        ? undefined
        : new LayoutFingerprintMismatchError(
              `the pages were written for KV layout ${manifest.layoutFingerprint}; this decode context is ${expected.layoutFingerprint}`
          );
}

/** ⌈tokens / pageTokens⌉ pages and checksums, and the token count decode expects. */
export function checkPageCount(
    manifest: PageManifest,
    expected: ManifestExpectation,
    pageTokens: number
): HandoffIntegrityError | undefined {
    const numPagesNeeded = numPagesFor(expected.numTokens, pageTokens);
    if (
        manifest.tokens.length === expected.numTokens &&
        manifest.pages.length === numPagesNeeded &&
        manifest.checksums.length === numPagesNeeded
    ) {
        return undefined;
    }
    return new PageCountMismatchError(
        `${expected.numTokens} tokens at ${pageTokens} per page need ${numPagesNeeded} pages; ` +
            `the manifest lists ${manifest.pages.length} pages, ${manifest.checksums.length} checksums and ${manifest.tokens.length} tokens`
    );
}

/** Page `index` of the manifest is sealed by the reader's holder at its generation and holds the next positions. */
export function checkPageOwner(
    manifest: PageManifest,
    index: number,
    expected: ManifestExpectation,
    pool: PagePool
): HandoffIntegrityError | undefined {
    const page = manifest.pages[index]!;
    const { pageTokens } = pool.config;
    const numPages = numPagesFor(expected.numTokens, pageTokens);
    const info = pool.pageInfo(page);
    if (
        info.state !== PageState.Sealed ||
        info.holder !== expected.holder ||
        info.workspace !== expected.workspace ||
        info.generation !== expected.generation
    ) {
        return new PageOwnerMismatchError(
            `page ${page} (${index + 1} of ${numPages}) is ${pageStateName(info.state)} for ${info.holder ?? "no one"} ` +
                `at generation ${info.generation}; expected sealed for ${expected.holder} at generation ${expected.generation}`
        );
    }
    const start = index * pageTokens;
    const end = Math.min(start + pageTokens, expected.numTokens);
    if (info.tokenStart !== start || info.tokenEnd !== end) {
        return new PagePositionsError(
            `page ${page} (${index + 1} of ${numPages}) holds positions [${info.tokenStart}, ${info.tokenEnd}); the next positions are [${start}, ${end})`
        );
    }
    return undefined;
}

/** Page `index` of the manifest, read at `generation`, recomputes to the checksum it was sealed with (I7). */
export function checkPageChecksum(
    manifest: PageManifest,
    index: number,
    generation: number,
    pool: PagePool
): HandoffIntegrityError | undefined {
    const verified = pool.verify(manifest.pages[index]!, generation);
    return verified.ok && verified.checksum === manifest.checksums[index] ? undefined : checksumFailure(manifest, index, verified);
}

/** Why page `index` of the manifest failed its checksum: the pool's verification failed, or it passed with another checksum than the manifest's. */
function checksumFailure(manifest: PageManifest, index: number, verified: VerifyResult | PagesVerifyResult): PageChecksumMismatchError {
    const recomputed = verified.ok
        ? ("checksum" in verified ? verified.checksum : verified.checksums[index]!).toString(16)
        : verified.error instanceof ChecksumMismatchError
          ? verified.error.actualChecksum.toString(16)
          : verified.error.message;
    return new PageChecksumMismatchError(
        `page ${manifest.pages[index]} (${index + 1} of ${manifest.pages.length}) recomputes to ${recomputed}; ` +
            `it was sealed as ${manifest.checksums[index]?.toString(16)}`
    );
}

/**
 * Decode's checks before it assembles anything (docs/ARCHITECTURE.md, handoff step 4): the manifest is
 * for this holder at this generation, the page count is ⌈tokens / pageTokens⌉, every page is sealed
 * by this holder at this generation and holds the next positions, and every checksum recomputes
 * equal. Returns the first failure as a value, the one a page-by-page pass would meet first: the
 * owners and positions are checked first (they read only the ledger), then the checksums of the
 * pages before the first page that failed them, recomputed together, off the engine's thread where
 * the pages are big (`PagePool.verifyPages`).
 */
export async function verifyManifest(
    manifest: PageManifest,
    expected: ManifestExpectation,
    pool: PagePool
): Promise<HandoffIntegrityError | undefined> {
    const failure =
        checkIdentity(manifest, expected) ?? checkLayout(manifest, expected) ?? checkPageCount(manifest, expected, pool.config.pageTokens);
    if (failure !== undefined) {
        return failure;
    }
    let ownerFailure: HandoffIntegrityError | undefined;
    let numOwned = manifest.pages.length;
    for (let index = 0; index < manifest.pages.length && ownerFailure === undefined; index++) {
        ownerFailure = checkPageOwner(manifest, index, expected, pool);
        numOwned = ownerFailure === undefined ? numOwned : index;
    }
    const verified = await pool.verifyPages(manifest.pages.slice(0, numOwned), expected.generation);
    return verifiedChecksumFailure(manifest, verified) ?? ownerFailure;
}

/** The first page whose checksum the pool refused, or whose recomputed checksum is not the manifest's, as its integrity error. */
function verifiedChecksumFailure(manifest: PageManifest, verified: PagesVerifyResult): HandoffIntegrityError | undefined {
    if (!verified.ok) {
        return checksumFailure(manifest, verified.index, verified);
    }
    const mismatch = verified.checksums.findIndex((checksum, index) => checksum !== manifest.checksums[index]);
    return mismatch >= 0 ? checksumFailure(manifest, mismatch, verified) : undefined;
}

/**
 * Decode's checks but the pages' checksums, for a load that recomputes them as it reads the pages
 * (`StateChunks.pageChecks`): the manifest is for this holder at this generation, the page count is
 * ⌈tokens / pageTokens⌉, and every page is sealed by this holder at this generation, holds the next
 * positions and was sealed with the checksum the manifest lists (the load compares what it reads
 * with that one). The first failure, as a value; `verifyRecomputed` finishes the job once the load
 * has read the pages.
 */
export function verifyManifestClaims(
    manifest: PageManifest,
    expected: ManifestExpectation,
    pool: PagePool
): HandoffIntegrityError | undefined {
    const failure =
        checkIdentity(manifest, expected) ?? checkLayout(manifest, expected) ?? checkPageCount(manifest, expected, pool.config.pageTokens);
    if (failure !== undefined) {
        return failure;
    }
    for (let index = 0; index < manifest.pages.length; index++) {
        const ownerFailure = checkPageOwner(manifest, index, expected, pool);
        if (ownerFailure !== undefined) {
            return ownerFailure;
        }
        const sealed = pool.pageInfo(manifest.pages[index]!).checksum;
        if (sealed !== manifest.checksums[index]) {
            return new PageChecksumMismatchError(
                `page ${manifest.pages[index]} (${index + 1} of ${manifest.pages.length}) was sealed as ${sealed?.toString(16)}; ` +
                    `the manifest lists ${manifest.checksums[index]?.toString(16)}`
            );
        }
    }
    return undefined;
}

/**
 * The checksums a load recomputed as it read the manifest's pages, checked as `verifyManifest`
 * checks the ones it computes (`PagePool.verifyPagesRecomputed`): the first failure, as a value.
 */
export async function verifyRecomputed(
    manifest: PageManifest,
    generation: number,
    recomputed: readonly bigint[],
    pool: PagePool
): Promise<HandoffIntegrityError | undefined> {
    return verifiedChecksumFailure(manifest, await pool.verifyPagesRecomputed(manifest.pages, generation, recomputed));
}
