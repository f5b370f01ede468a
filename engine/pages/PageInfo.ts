import type { PageId, PageHolder, WorkspaceId } from "../core/ids.js";
import { PageState } from "./PageState.js";
import type { PageLedger } from "./PageLedger.js";

/** One page's metadata, for tests, drills and the UI's page detail. */
export interface PageInfo {
    readonly pageId: PageId;
    readonly state: PageState;
    readonly generation: number;
    /** Present while the page is owned (reserved, written, sealed, quarantined). */
    readonly workspace?: WorkspaceId;
    readonly holder?: PageHolder;
    /** Token positions the page holds, `[tokenStart, tokenEnd)`; both 0 on a free page. */
    readonly tokenStart: number;
    readonly tokenEnd: number;
    readonly numValidBytes: number;
    /** Present while sealed. */
    readonly checksum?: bigint;
    readonly numReadLeases: number;
    readonly hasWriter: boolean;
}

export function pageInfoOf(ledger: PageLedger, pageId: PageId): PageInfo {
    const owner = ledger.owners[pageId];
    const state = ledger.states[pageId] as PageState;
    return {
        pageId,
        state,
        generation: ledger.generations[pageId] as number,
        ...(owner === undefined ? {} : { workspace: owner.workspace, holder: owner.holder }),
        tokenStart: ledger.tokenStarts[pageId] as number,
        tokenEnd: ledger.tokenEnds[pageId] as number,
        numValidBytes: ledger.numValidBytes[pageId] as number,
        ...(state === PageState.Sealed ? { checksum: ledger.checksums[pageId] as bigint } : {}),
        numReadLeases: ledger.numReadLeases[pageId] as number,
        hasWriter: ledger.writeLeased[pageId] === 1
    };
}
