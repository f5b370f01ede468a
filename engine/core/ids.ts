// Branded ids keep pages, requests, swaps and workspaces from being confused at module boundaries.
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

/** Index of a page in the pool's arena, `[0, numPages)`. */
export type PageId = Brand<number, "PageId">;
/**
 * One generation request: the host's `requestId` when a host sent it (one id from the HTTP request
 * or the page to the engine), else `req-<n>`; unique among the engine's live requests.
 */
export type RequestId = Brand<string, "RequestId">;
/** A workspace's conversation state; the isolation boundary. */
export type WorkspaceId = Brand<string, "WorkspaceId">;
/** One swap-out of a workspace's KV into pages: `swap-<workspace>-<n>`. Not a request: no generation runs under it. */
export type SwapId = Brand<string, "SwapId">;
/** Who holds a reservation of pages: a request (its handoff) or a swap-out (a workspace's KV between turns). */
export type PageHolder = RequestId | SwapId;

export const pageId = (index: number): PageId => index as PageId;
export const requestId = (id: string): RequestId => id as RequestId;
export const workspaceId = (id: string): WorkspaceId => id as WorkspaceId;
export const swapId = (workspace: WorkspaceId, numSwapOut: number): SwapId => `swap-${workspace}-${numSwapOut}` as SwapId;
