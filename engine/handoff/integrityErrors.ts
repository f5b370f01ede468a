import { KvaultError } from "../core/KvaultError.js";

/**
 * A handoff that did not arrive whole and exactly as sealed. The request ends with this error; it
 * never decodes over pages it did not receive (ARCHITECTURE.md, handoff step 4).
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
