import type { PageId, PageHolder } from "../core/ids.js";
import { KvaultError } from "../core/KvaultError.js";
import { formatChecksum } from "./pageChecksum.js";

// Expected refusals of the page pool. They come back as values (`{ ok: false, error }`)
// except `DisposedError` and `PagePoolConfigError`, which are thrown: a disposed pool has no
// meaningful result to return, and a constructor cannot return one.

/**
 * A handle's generation is not the page's current one, or the page went back to the free list:
 * the caller's claim on the page ended (cancelled, released, reused). Late and duplicate
 * completions land here (late write after cancel, foreign manifest, replayed completion:
 * docs/FAILURE-MODES.md).
 */
export class StaleGenerationError extends KvaultError {
    readonly code = "stale_generation";

    constructor(
        readonly pageId: PageId,
        readonly handleGeneration: number,
        /** The page's current generation; undefined when the page is free. */
        readonly pageGeneration: number | undefined,
        readonly operation: string
    ) {
        super(
            `Refused ${operation} on page ${pageId}: the handle has generation ${handleGeneration}, the page is ` +
                (pageGeneration === undefined ? "free" : `at generation ${pageGeneration}`) +
                ". Whoever held it has released it; discard this handle."
        );
    }
}

export type PageStateRefusal = "page_released" | "page_not_sealed" | "page_already_sealed";

/**
 * The generation matches but the page is not in a state that allows the operation:
 * writing or reading after the owner released it, reading before it is sealed, writing or
 * sealing after it was sealed.
 */
export class PageStateError extends KvaultError {
    constructor(
        readonly code: PageStateRefusal,
        readonly pageId: PageId,
        readonly generation: number,
        readonly operation: string,
        readonly stateName: string
    ) {
        super(`Refused ${operation} on page ${pageId} at generation ${generation}: the page is ${stateName} (${code}).`);
    }
}

/** A release for a reservation that no longer exists (already released, or never made): a double release (docs/FAILURE-MODES.md). */
export class DoubleReleaseError extends KvaultError {
    readonly code = "double_release";

    constructor(
        readonly holder: PageHolder,
        readonly generation: number,
        readonly heldGeneration: number | undefined
    ) {
        super(
            `${holder} released its pages at generation ${generation}, but ` +
                (heldGeneration === undefined ? "it holds no reservation" : `its current reservation is at generation ${heldGeneration}`) +
                ". The second release was ignored; no page changed."
        );
    }
}

/** A sealed page's bytes no longer hash to the checksum recorded when it was sealed (flipped byte, docs/FAILURE-MODES.md). */
export class ChecksumMismatchError extends KvaultError {
    readonly code = "checksum_mismatch";

    constructor(
        readonly pageId: PageId,
        readonly generation: number,
        readonly sealedChecksum: bigint,
        readonly actualChecksum: bigint
    ) {
        super(
            `Page ${pageId} at generation ${generation} changed after it was sealed: checksum ` +
                `0x${formatChecksum(actualChecksum)}, sealed as 0x${formatChecksum(sealedChecksum)}. ` +
                "Its contents cannot be trusted; the request must end with an integrity error."
        );
    }
}

/** Any call on a page pool (or one of its leases) after `dispose()`. */
export class DisposedError extends KvaultError {
    readonly code = "pool_disposed";

    constructor(operation: string) {
        super(`Cannot ${operation}: the page pool was disposed. Create a new pool.`);
    }
}

/** The host could not allocate the arena, although the configuration is within limits. */
export class ArenaAllocationError extends KvaultError {
    readonly code = "arena_allocation_failed";

    constructor(numBytes: number, cause: unknown) {
        super(
            `Could not allocate ${numBytes.toLocaleString("en-US")} bytes of host memory for the page pool. ` +
                "Use fewer pages or a smaller context window, or close other applications.",
            { cause }
        );
    }
}

/** The pool's configuration is not usable; the message says which value and why. */
export class PagePoolConfigError extends KvaultError {
    readonly code = "invalid_page_pool_config";
}
