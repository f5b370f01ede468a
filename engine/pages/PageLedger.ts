import { pageId as toPageId, type PageHolder, type PageId, type WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import { PageStateError, StaleGenerationError } from "./pageErrors.js";
import type { PageAccessRefusal } from "./pagePoolResults.js";
import { NUM_PAGE_STATES, PageState, pageStateName } from "./PageState.js";

/** The pool's record of a reservation; every page it owns points to it, until that page is scrubbed. */
export interface PageOwner {
    readonly workspace: WorkspaceId;
    readonly holder: PageHolder;
    readonly generation: number;
    readonly pages: readonly PageId[];
    /** Set once by `release()`; the owner's pages stay quarantined under it until their leases drain. */
    released: boolean;
}

/**
 * The pool's per-page metadata (state, owner, generation, token range, leases, checksum) as
 * parallel typed arrays, so that an audit or a snapshot of 65,536 pages is a handful of linear
 * scans. Not a block table: it maps no sequence's positions to pages (a `PageManifest` does that
 * for one transfer). Only `PagePool` mutates it; `PagePoolAudit` reads it.
 */
export class PageLedger {
    readonly states: Uint8Array;
    /** Generation of the last reservation that took the page; 0 for a page never reserved. */
    readonly generations: Float64Array;
    readonly owners: (PageOwner | undefined)[];
    /** Token positions the page holds, half-open `[tokenStarts[i], tokenEnds[i])`; both 0 on a free page. */
    readonly tokenStarts: Float64Array;
    readonly tokenEnds: Float64Array;
    /** Bytes from the start of the page its owner wrote (high-water mark); reads stop here. */
    readonly numValidBytes: Float64Array;
    /** xxh64 of the valid bytes, meaningful while the page is sealed (or quarantined after a seal). */
    readonly checksums: BigUint64Array;
    readonly numReadLeases: Uint32Array;
    /** 1 while a write lease is held; at most one writer per page. */
    readonly writeLeased: Uint8Array;
    /** 1 while a drained page's bytes are being zeroed on the page threads: it stays quarantined until they are done. */
    readonly zeroing: Uint8Array;
    /** Pages in each state, kept in step with `states`; indexed by `PageState`. */
    readonly numPagesByState: Float64Array;
    /** Free pages as a stack; `freeStack[0, numFree)` are valid. */
    readonly freeStack: Uint32Array;
    numFree: number;

    constructor(readonly numPages: number) {
        this.states = new Uint8Array(numPages);
        this.generations = new Float64Array(numPages);
        this.owners = new Array<PageOwner | undefined>(numPages).fill(undefined);
        this.tokenStarts = new Float64Array(numPages);
        this.tokenEnds = new Float64Array(numPages);
        this.numValidBytes = new Float64Array(numPages);
        this.checksums = new BigUint64Array(numPages);
        this.numReadLeases = new Uint32Array(numPages);
        this.writeLeased = new Uint8Array(numPages);
        this.zeroing = new Uint8Array(numPages);
        this.numPagesByState = new Float64Array(NUM_PAGE_STATES);
        this.numPagesByState[PageState.Free] = numPages;
        // Reversed, so that a fresh pool hands out page 0 first.
        this.freeStack = new Uint32Array(numPages);
        for (let index = 0; index < numPages; index++) {
            this.freeStack[index] = numPages - 1 - index;
        }
        this.numFree = numPages;
    }

    /** Why a claim `(pageId, generation)` no longer holds, if it does not: the page was freed, reused, or released. */
    claimRefusal(pageId: PageId, generation: number, operation: string): PageAccessRefusal | undefined {
        this.assertPageId(pageId);
        invariant(
            Number.isSafeInteger(generation) && generation >= 1,
            () => `${operation} on page ${pageId} with generation ${generation}`
        );
        const state = this.states[pageId] as number;
        const pageGeneration = this.generations[pageId] as number;
        if (state === PageState.Free) {
            return new StaleGenerationError(pageId, generation, undefined, operation);
        }
        if (pageGeneration !== generation) {
            return new StaleGenerationError(pageId, generation, pageGeneration, operation);
        }
        if (state === PageState.Quarantined) {
            return new PageStateError("page_released", pageId, generation, operation, "quarantined");
        }
        return undefined;
    }

    assertPageId(pageId: PageId): void {
        invariant(Number.isInteger(pageId) && pageId >= 0 && pageId < this.numPages, () => `page ${pageId} outside [0, ${this.numPages})`);
    }

    setState(page: PageId, to: PageState): void {
        const from = this.states[page] as PageState;
        this.numPagesByState[from] = (this.numPagesByState[from] ?? 0) - 1;
        this.numPagesByState[to] = (this.numPagesByState[to] ?? 0) + 1;
        this.states[page] = to;
    }

    /** Takes the top free page for `owner`, holding token positions `[tokenStart, tokenEnd)`. */
    takeFree(owner: PageOwner, tokenStart: number, tokenEnd: number): PageId {
        invariant(this.numFree > 0, () => `${owner.holder} takes a page from an empty free list (${this.numPages} pages)`);
        this.numFree--;
        const page = toPageId(this.freeStack[this.numFree] as number);
        invariant(
            this.states[page] === PageState.Free &&
                this.numReadLeases[page] === 0 &&
                this.writeLeased[page] === 0 &&
                this.zeroing[page] === 0,
            () =>
                `free list held page ${page}, ${pageStateName(this.states[page] as number)} with ` +
                `${this.numReadLeases[page]} read and ${this.writeLeased[page]} write leases`
        );
        this.setState(page, PageState.Reserved);
        this.generations[page] = owner.generation;
        this.owners[page] = owner;
        this.tokenStarts[page] = tokenStart;
        this.tokenEnds[page] = tokenEnd;
        return page;
    }

    /** Clears the metadata of a page already zeroed and puts it back on the free list. */
    pushFree(page: PageId): void {
        invariant(
            this.numFree < this.numPages,
            () => `pushFree of page ${page} onto a full free list (${this.numFree} of ${this.numPages})`
        );
        this.setState(page, PageState.Free);
        this.owners[page] = undefined;
        this.tokenStarts[page] = 0;
        this.tokenEnds[page] = 0;
        this.numValidBytes[page] = 0;
        this.checksums[page] = 0n;
        this.freeStack[this.numFree] = page;
        this.numFree++;
    }
}
