import type { ChecksumMismatchError, DoubleReleaseError, PageStateError, StaleGenerationError } from "./pageErrors.js";
import type { PageLease } from "./PageLease.js";
import type { PageId } from "../core/ids.js";

// Expected outcomes of the pool's calls, as values; `error.code` is stable.

/** Why a claim `(pageId, generation)` was refused: it ended, or the page is in the wrong state for the call. */
export type PageAccessRefusal = StaleGenerationError | PageStateError;

export type PageLeaseResult<L extends PageLease> =
    | { readonly ok: true; readonly lease: L }
    | { readonly ok: false; readonly error: PageAccessRefusal };

export type SealResult = { readonly ok: true; readonly checksum: bigint } | { readonly ok: false; readonly error: PageAccessRefusal };

export type VerifyResult =
    | { readonly ok: true; readonly checksum: bigint }
    | { readonly ok: false; readonly error: PageAccessRefusal | ChecksumMismatchError };

/** A page of a batch seal and its token count (`PagePool.sealPages`). */
export interface PageToSeal {
    readonly pageId: PageId;
    readonly numTokens: number;
}

/** A batch seal: every page's checksum in order, or the first refusal and its page's index in the batch. */
export type PagesSealResult =
    | { readonly ok: true; readonly checksums: readonly bigint[] }
    | { readonly ok: false; readonly index: number; readonly error: PageAccessRefusal };

/** A batch verification: every page's checksum in order, or the first failure and its page's index in the batch. */
export type PagesVerifyResult =
    | { readonly ok: true; readonly checksums: readonly bigint[] }
    | { readonly ok: false; readonly index: number; readonly error: PageAccessRefusal | ChecksumMismatchError };

export type ReleaseResult =
    | {
          readonly ok: true;
          /** Pages zeroed and back on the free list during this call. */
          readonly numPagesScrubbed: number;
          /** Pages left quarantined because a lease still holds them; each is scrubbed when its last lease drains. */
          readonly numPagesQuarantined: number;
      }
    | { readonly ok: false; readonly error: DoubleReleaseError };
