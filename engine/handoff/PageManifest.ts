import type { PageHolder, PageId, WorkspaceId } from "../core/ids.js";

/** What travels from prefill to decode with the pages (docs/ARCHITECTURE.md, The handoff protocol). */
export interface PageManifest {
    /** The request whose handoff, or the swap-out whose KV, the pages carry. */
    readonly holder: PageHolder;
    readonly workspace: WorkspaceId;
    readonly generation: number;
    /** In token order: `pages[i]` holds positions `[i·pageTokens, min((i+1)·pageTokens, numTokens))`. */
    readonly pages: readonly PageId[];
    /** The token ids whose KV the pages hold. */
    readonly tokens: readonly number[];
    /** Hash of the KV layout and the model fingerprint of the writer. */
    readonly layoutFingerprint: string;
    /** Per page, the checksum recorded when it was sealed. */
    readonly checksums: readonly bigint[];
}
