import type { PagePool } from "../pages/PagePool.js";
import { PageState, pageStateName } from "../pages/PageState.js";
import { numPagesFor } from "../codec/statePages.js";
import type { RequestId, WorkspaceId } from "../core/ids.js";
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
    readonly request: RequestId;
    readonly workspace: WorkspaceId;
    readonly generation: number;
    readonly layoutFingerprint: string;
    readonly numTokens: number;
}

/** Which of decode's checks run: all of them, except inside a fault drill's sandbox. */
export interface HandoffChecks {
    /** Request, workspace, generation, layout, and every page's owner, state and positions. */
    readonly ownership: boolean;
    /** ⌈tokens / pageTokens⌉ pages and checksums, and the token count decode expects. */
    readonly pageCount: boolean;
    readonly checksums: boolean;
    /**
     * Completions and pages are named by (request, generation): a completion that is not the
     * reader's own is ignored and counted (failure mode 7), and a page is read only at the
     * generation its manifest names. Off, a reader takes the first completion delivered to it and
     * names pages by their id alone, whatever generation they are at now.
     */
    readonly generations: boolean;
}

export const allHandoffChecks: HandoffChecks = Object.freeze({ ownership: true, pageCount: true, checksums: true, generations: true });

/**
 * Decode's checks before it assembles anything (ARCHITECTURE.md, handoff step 4): the manifest is
 * for this request at this generation, the page count is ⌈tokens / pageTokens⌉, every page is sealed
 * by this request at this generation and holds the next positions, and every checksum recomputes
 * equal. Returns the first failure as a value.
 */
export function verifyManifest(
    manifest: PageManifest,
    expected: ManifestExpectation,
    pool: PagePool,
    checks: HandoffChecks = allHandoffChecks
): HandoffIntegrityError | undefined {
    const { pageTokens } = pool.config;
    if (
        checks.ownership &&
        (manifest.request !== expected.request || manifest.workspace !== expected.workspace || manifest.generation !== expected.generation)
    ) {
        return new PageOwnerMismatchError(
            `the manifest is for request ${manifest.request} (workspace ${manifest.workspace}) at generation ${manifest.generation}; ` +
                `decode expected request ${expected.request} (workspace ${expected.workspace}) at generation ${expected.generation}`
        );
    }
    if (checks.ownership && manifest.layoutFingerprint !== expected.layoutFingerprint) {
        return new LayoutFingerprintMismatchError(
            `the pages were written for KV layout ${manifest.layoutFingerprint}; this decode context is ${expected.layoutFingerprint}`
        );
    }
    const numPagesNeeded = numPagesFor(expected.numTokens, pageTokens);
    if (
        checks.pageCount &&
        (manifest.tokens.length !== expected.numTokens ||
            manifest.pages.length !== numPagesNeeded ||
            manifest.checksums.length !== numPagesNeeded)
    ) {
        return new PageCountMismatchError(
            `${expected.numTokens} tokens at ${pageTokens} per page need ${numPagesNeeded} pages; ` +
                `the manifest lists ${manifest.pages.length} pages, ${manifest.checksums.length} checksums and ${manifest.tokens.length} tokens`
        );
    }
    if (!checks.ownership) {
        return checks.checksums ? verifyChecksums(manifest, pool, checks) : undefined;
    }

    for (const [index, page] of manifest.pages.entries()) {
        const info = pool.pageInfo(page);
        if (
            info.state !== PageState.Sealed ||
            info.request !== expected.request ||
            info.workspace !== expected.workspace ||
            info.generation !== expected.generation
        ) {
            return new PageOwnerMismatchError(
                `page ${page} (${index + 1} of ${numPagesNeeded}) is ${pageStateName(info.state)} for request ${info.request ?? "none"} ` +
                    `at generation ${info.generation}; expected sealed for request ${expected.request} at generation ${expected.generation}`
            );
        }
        const start = index * pageTokens;
        const end = Math.min(start + pageTokens, expected.numTokens);
        if (info.tokenStart !== start || info.tokenEnd !== end) {
            return new PagePositionsError(
                `page ${page} (${index + 1} of ${numPagesNeeded}) holds positions [${info.tokenStart}, ${info.tokenEnd}); the next positions are [${start}, ${end})`
            );
        }
        if (!checks.checksums) {
            continue;
        }
        const verified = pool.verify(page, expected.generation);
        if (!verified.ok || verified.checksum !== manifest.checksums[index]) {
            return new PageChecksumMismatchError(
                `page ${page} (${index + 1} of ${numPagesNeeded}) recomputes to ` +
                    `${verified.ok ? verified.checksum.toString(16) : verified.error.message}; it was sealed as ${manifest.checksums[index]!.toString(16)}`
            );
        }
    }
    return undefined;
}

/** The checksum half alone, for a drill that switches the ownership checks off. */
function verifyChecksums(manifest: PageManifest, pool: PagePool, checks: HandoffChecks): HandoffIntegrityError | undefined {
    for (const [index, page] of manifest.pages.entries()) {
        const verified = pool.verify(page, checks.generations ? manifest.generation : pool.pageInfo(page).generation);
        if (!verified.ok || verified.checksum !== manifest.checksums[index]) {
            return new PageChecksumMismatchError(
                `page ${page} (${index + 1} of ${manifest.pages.length}) recomputes to ` +
                    `${verified.ok ? verified.checksum.toString(16) : verified.error.message}; it was sealed as ${manifest.checksums[index]?.toString(16)}`
            );
        }
    }
    return undefined;
}
