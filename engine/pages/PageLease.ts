import type { PageId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { PageStateError } from "./pageErrors.js";
import type { PageHandle } from "./Reservation.js";

export type PageWriteResult =
    | { readonly ok: true; readonly numValidBytes: number }
    | { readonly ok: false; readonly error: PageStateError };

export type PageTargetResult = { readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly error: PageStateError };

/** The part of `PagePool` a lease calls back into; the pool implements it privately. */
export interface PageLeaseHost {
    writeThrough(lease: PageWriteLease, byteOffset: number, bytes: Uint8Array): PageWriteResult;
    targetThrough(lease: PageWriteLease, byteOffset: number, numBytes: number): PageTargetResult;
    recordWrittenThrough(lease: PageWriteLease, numValidBytes: number): PageWriteResult;
    readThrough(lease: PageReadLease, byteOffset: number, numBytes: number | undefined, copy: boolean): Uint8Array;
    numValidBytesOf(lease: PageReadLease): number;
    releaseLease(lease: PageLease): void;
}

/**
 * Permission to touch one page at one generation. While any lease is held the page cannot be
 * scrubbed or reused: a release by its owner only quarantines it (late write after cancel, pages
 * reused under a reader: docs/FAILURE-MODES.md).
 * `release()` is idempotent, so it is safe in `finally` blocks and on every error path.
 */
export abstract class PageLease implements PageHandle {
    abstract readonly kind: "read" | "write";
    #released = false;

    constructor(
        readonly pageId: PageId,
        readonly generation: number,
        protected readonly host: PageLeaseHost
    ) {}

    get isReleased(): boolean {
        return this.#released;
    }

    release(): void {
        if (this.#released) {
            return;
        }
        this.#released = true;
        this.host.releaseLease(this);
    }

    protected assertHeld(operation: string): void {
        invariant(
            !this.#released,
            () => `${operation} through a released ${this.kind} lease on page ${this.pageId} at generation ${this.generation}`
        );
    }
}

/** The single writer of a page before it is sealed. */
export class PageWriteLease extends PageLease {
    readonly kind = "write";

    /**
     * Copies `bytes` into the page at `byteOffset`. Refused (a value, bytes unchanged) once the
     * owner released the page; a write past `pageBytes` is a bug and throws with the numbers.
     */
    write(byteOffset: number, bytes: Uint8Array): PageWriteResult {
        this.assertHeld("write");
        return this.host.writeThrough(this, byteOffset, bytes);
    }

    /**
     * The page's bytes `[byteOffset, byteOffset + numBytes)` themselves, for a writer off this
     * thread (llama.cpp saving a state straight into the pages): valid only while this lease is
     * held, which keeps the page from being scrubbed and reused under the writer. Nothing counts
     * as written until `recordWritten`. Refused (a value) once the owner released the page.
     */
    target(byteOffset: number, numBytes: number): PageTargetResult {
        this.assertHeld("write target");
        return this.host.targetThrough(this, byteOffset, numBytes);
    }

    /**
     * Records that the page's first `numValidBytes` bytes were written through targets, once the
     * writer is done. Refused (a value) when the owner released the page meanwhile: what was
     * written is never read, and the scrub zeroes it once this lease ends.
     */
    recordWritten(numValidBytes: number): PageWriteResult {
        this.assertHeld("record written bytes");
        return this.host.recordWrittenThrough(this, numValidBytes);
    }
}

/** A reader of a sealed page; reads are bounded by the bytes its owner wrote (Cloudbleed). */
export class PageReadLease extends PageLease {
    readonly kind = "read";

    /** Bytes the owner wrote, from the start of the page. */
    get numValidBytes(): number {
        this.assertHeld("numValidBytes");
        return this.host.numValidBytesOf(this);
    }

    /**
     * A copy of the bytes `[byteOffset, byteOffset + numBytes)`, by default up to the valid length.
     * A copy, not a view: a view would show the next owner's bytes once the page is reused.
     * Reading past the valid length is a bug and throws with the numbers.
     */
    read(byteOffset = 0, numBytes?: number): Uint8Array {
        this.assertHeld("read");
        return this.host.readThrough(this, byteOffset, numBytes, true);
    }

    /**
     * The bytes `[byteOffset, byteOffset + numBytes)` themselves, bounded as `read` is, without the
     * copy: valid only until this lease is released (the page cannot be scrubbed or reused while
     * it is held), so a caller uses it at once (a gathered write of a state file) and keeps nothing.
     */
    view(byteOffset: number, numBytes: number): Uint8Array {
        this.assertHeld("view");
        return this.host.readThrough(this, byteOffset, numBytes, false);
    }
}
