// Branded ids keep pages, requests and workspaces from being swapped at module boundaries (STYLE.md 3).
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

/** Index of a page in the pool's arena, `[0, numPages)`. */
export type PageId = Brand<number, "PageId">;
/** One generation request; unique for the life of an engine. */
export type RequestId = Brand<string, "RequestId">;
/** A workspace's conversation state; the isolation boundary. */
export type WorkspaceId = Brand<string, "WorkspaceId">;

export const pageId = (index: number): PageId => index as PageId;
export const requestId = (id: string): RequestId => id as RequestId;
export const workspaceId = (id: string): WorkspaceId => id as WorkspaceId;
