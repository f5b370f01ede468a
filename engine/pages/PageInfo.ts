import type { PageId, RequestId, SessionId } from "../core/ids.js";
import { PageState } from "./PageState.js";
import type { PageTable } from "./PageTable.js";

/** One page's metadata, for tests, drills and the UI's page detail. */
export interface PageInfo {
    readonly pageId: PageId;
    readonly state: PageState;
    readonly generation: number;
    /** Present while the page is owned (reserved, written, sealed, quarantined). */
    readonly session?: SessionId;
    readonly request?: RequestId;
    /** Token positions the page holds, `[tokenStart, tokenEnd)`; both 0 on a free page. */
    readonly tokenStart: number;
    readonly tokenEnd: number;
    readonly numValidBytes: number;
    /** Present while sealed. */
    readonly checksum?: bigint;
    readonly numReadLeases: number;
    readonly hasWriter: boolean;
}

export function pageInfoOf(table: PageTable, pageId: PageId): PageInfo {
    const owner = table.owners[pageId];
    const state = table.states[pageId] as PageState;
    return {
        pageId,
        state,
        generation: table.generations[pageId] as number,
        ...(owner === undefined ? {} : { session: owner.session, request: owner.request }),
        tokenStart: table.tokenStarts[pageId] as number,
        tokenEnd: table.tokenEnds[pageId] as number,
        numValidBytes: table.numValidBytes[pageId] as number,
        ...(state === PageState.Sealed ? { checksum: table.checksums[pageId] as bigint } : {}),
        numReadLeases: table.numReadLeases[pageId] as number,
        hasWriter: table.writeLeased[pageId] === 1
    };
}
