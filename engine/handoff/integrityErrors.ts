import { KvaultError } from "../core/KvaultError.js";
import type { PageHolder } from "../core/ids.js";

/**
 * A handoff that did not arrive whole and exactly as sealed. The request ends with this error; it
 * never decodes over pages it did not receive (docs/ARCHITECTURE.md, The handoff protocol).
 */
export abstract class HandoffIntegrityError extends KvaultError {
    constructor(detail: string) {
        super(`KV handoff refused: ${detail}. Nothing was decoded; the engine is healthy, retry the request.`);
    }
}

export class PageCountMismatchError extends HandoffIntegrityError {
    readonly code = "handoff_page_count_mismatch";
}

export class PageOwnerMismatchError extends HandoffIntegrityError {
    readonly code = "handoff_page_owner_mismatch";
}

export class PageChecksumMismatchError extends HandoffIntegrityError {
    readonly code = "handoff_checksum_mismatch";
}

export class PagePositionsError extends HandoffIntegrityError {
    readonly code = "handoff_positions_not_contiguous";
}

export class LayoutFingerprintMismatchError extends HandoffIntegrityError {
    readonly code = "handoff_layout_mismatch";
}

/**
 * A completion that reached a reader but is not its own: a late or duplicate one of an earlier
 * transfer whose pages have since been released and reserved again: a replayed completion (ABA,
 * docs/FAILURE-MODES.md). Not an error of the reader's request: the completion is ignored by its
 * generation tag and counted, and nothing changes; the reader goes on with its own completion.
 */
export class StaleCompletionIgnoredError extends KvaultError {
    readonly code = "stale_completion_ignored";

    constructor(
        readonly stale: { readonly holder: PageHolder; readonly generation: number },
        readonly reader: { readonly holder: PageHolder; readonly generation: number }
    ) {
        super(
            `A completion of ${stale.holder} at generation ${stale.generation} reached ${reader.holder} at generation ${reader.generation}; ` +
                "it was ignored by its generation tag and changed nothing."
        );
    }
}

/** Whether a request's error is an integrity failure: a handoff refused, or a page's checksum, generation or layout that did not match. */
export function isIntegrityFailure(error: Error): boolean {
    return error instanceof HandoffIntegrityError || (error instanceof KvaultError && /checksum|stale|mismatch/.test(error.code));
}
