import type { PageHolder, PageId, WorkspaceId } from "../core/ids.js";

/** A claim on one page: valid while the page's generation equals `generation` and its owner has not released it. */
export interface PageHandle {
    readonly pageId: PageId;
    readonly generation: number;
}

export interface ReserveRequest {
    readonly workspace: WorkspaceId;
    readonly holder: PageHolder;
    /** Pages to take, all or none; at least 1. */
    readonly numPages: number;
    /** Position of the first token the first page holds; page `i` holds `[firstToken + i·pageTokens, firstToken + (i+1)·pageTokens)`. */
    readonly firstToken: number;
}

/**
 * Pages taken together by one holder (a request's handoff, or a workspace's swap-out). Every page carries the reservation's generation, which the
 * pool draws from one counter that only increases, so a handle is never valid for two reservations.
 */
export interface Reservation {
    readonly workspace: WorkspaceId;
    readonly holder: PageHolder;
    readonly generation: number;
    readonly firstToken: number;
    /** In token order: `pages[i]` holds the positions `[firstToken + i·pageTokens, firstToken + (i+1)·pageTokens)`. */
    readonly pages: readonly PageHandle[];
}

/** What `release()` needs: which holder, and which of its reservations (a late release names an old one). */
export type ReservationRef = Pick<Reservation, "holder" | "generation">;
