import type { PagePool } from "../pages/PagePool.js";
import { PageState, pageStateName } from "../pages/PageState.js";
import { numPagesFor } from "../codec/statePages.js";
import type { RequestId, SessionId } from "../core/ids.js";
import {
    LayoutFingerprintMismatchError, PageChecksumMismatchError, PageCountMismatchError, PageOwnerMismatchError,
    PagePositionsError, type HandoffIntegrityError
} from "./integrityErrors.js";
import type { PageManifest } from "./PageManifest.js";

export interface ManifestExpectation {
    readonly request: RequestId;
    readonly session: SessionId;
    readonly generation: number;
    readonly layoutFingerprint: string;
    readonly numTokens: number;
}

/**
 * Decode's checks before it assembles anything (ARCHITECTURE.md, handoff step 4): the manifest is
 * for this request at this generation, the page count is ⌈tokens / pageTokens⌉, every page is sealed
 * by this request at this generation and holds the next positions, and every checksum recomputes
 * equal. Returns the first failure as a value.
 */
/** Which of decode's checks run: all of them, except inside a fault drill's sandbox. */
export interface HandoffChecks {
    /** Request, session, generation, layout, page count and positions. */
    readonly ownership: boolean;
    readonly checksums: boolean;
}

export const allHandoffChecks: HandoffChecks = Object.freeze({ ownership: true, checksums: true });

export function verifyManifest(manifest: PageManifest, expected: ManifestExpectation, pool: PagePool, checks: HandoffChecks = allHandoffChecks): HandoffIntegrityError | undefined {
    const { pageTokens } = pool.config;
    if (!checks.ownership)
        return checks.checksums ? verifyChecksums(manifest, pool) : undefined;
    if (manifest.request !== expected.request || manifest.session !== expected.session || manifest.generation !== expected.generation)
        return new PageOwnerMismatchError(`the manifest is for request ${manifest.request} (session ${manifest.session}) at generation ${manifest.generation}; ` +
            `decode expected request ${expected.request} (session ${expected.session}) at generation ${expected.generation}`);
    if (manifest.layoutFingerprint !== expected.layoutFingerprint)
        return new LayoutFingerprintMismatchError(`the pages were written for KV layout ${manifest.layoutFingerprint}; this decode context is ${expected.layoutFingerprint}`);
    const numPagesNeeded = numPagesFor(expected.numTokens, pageTokens);
    if (manifest.tokens.length !== expected.numTokens || manifest.pages.length !== numPagesNeeded || manifest.checksums.length !== numPagesNeeded)
        return new PageCountMismatchError(`${expected.numTokens} tokens at ${pageTokens} per page need ${numPagesNeeded} pages; ` +
            `the manifest lists ${manifest.pages.length} pages, ${manifest.checksums.length} checksums and ${manifest.tokens.length} tokens`);

    for (const [index, page] of manifest.pages.entries()) {
        const info = pool.pageInfo(page);
        if (info.state !== PageState.Sealed || info.request !== expected.request || info.session !== expected.session || info.generation !== expected.generation)
            return new PageOwnerMismatchError(`page ${page} (${index + 1} of ${numPagesNeeded}) is ${pageStateName(info.state)} for request ${info.request ?? "none"} ` +
                `at generation ${info.generation}; expected sealed for request ${expected.request} at generation ${expected.generation}`);
        const start = index * pageTokens;
        const end = Math.min(start + pageTokens, expected.numTokens);
        if (info.tokenStart !== start || info.tokenEnd !== end)
            return new PagePositionsError(`page ${page} (${index + 1} of ${numPagesNeeded}) holds positions [${info.tokenStart}, ${info.tokenEnd}); the next positions are [${start}, ${end})`);
        if (!checks.checksums)
            continue;
        const verified = pool.verify(page, expected.generation);
        if (!verified.ok || verified.checksum !== manifest.checksums[index])
            return new PageChecksumMismatchError(`page ${page} (${index + 1} of ${numPagesNeeded}) recomputes to ` +
                `${verified.ok ? verified.checksum.toString(16) : verified.error.message}; it was sealed as ${manifest.checksums[index]!.toString(16)}`);
    }
    return undefined;
}

/** The checksum half alone, for a drill that switches the ownership checks off. */
function verifyChecksums(manifest: PageManifest, pool: PagePool): HandoffIntegrityError | undefined {
    for (const [index, page] of manifest.pages.entries()) {
        const verified = pool.verify(page, manifest.generation);
        if (!verified.ok || verified.checksum !== manifest.checksums[index])
            return new PageChecksumMismatchError(`page ${page} (${index + 1} of ${manifest.pages.length}) recomputes to ` +
                `${verified.ok ? verified.checksum.toString(16) : verified.error.message}; it was sealed as ${manifest.checksums[index]?.toString(16)}`);
    }
    return undefined;
}
