import type { ChecksumMismatchError, DoubleReleaseError, PageStateError, StaleGenerationError } from "./pageErrors.js";
import type { PageLease } from "./PageLease.js";

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

export type ReleaseResult =
    | {
          readonly ok: true;
          /** Pages zeroed and back on the free list during this call. */
          readonly numPagesScrubbed: number;
          /** Pages left quarantined because a lease still holds them; each is scrubbed when its last lease drains. */
          readonly numPagesQuarantined: number;
      }
    | { readonly ok: false; readonly error: DoubleReleaseError };
