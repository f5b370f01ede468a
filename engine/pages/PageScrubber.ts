import type { PageId } from "../core/ids.js";
import type { PageArena } from "./PageArena.js";
import type { PageHasher } from "./PageHasher.js";

/**
 * What happens to a page's bytes between its last lease draining and its return to the free list
 * (I6: free pages are all zero). The pool receives one at construction: `zeroingScrubber` always,
 * except in a fault drill's sandbox (engine/drills/).
 */
export interface PageScrubber {
    /** Makes a drained page's bytes safe for its next owner; whether it zeroed them (counted as scrubbed). */
    scrub(arena: PageArena, page: PageId): boolean;
    /**
     * `scrub` of drained pages done on the page threads, settling once it is done: whether it zeroed
     * them. Rejects where the threads cannot (the pool then calls `scrub`). Absent: always `scrub`.
     */
    scrubOffThread?(arena: PageArena, pages: readonly PageId[], threads: PageHasher): Promise<boolean>;
}

/** Zeroes every byte of the page: no later owner can read an earlier one's KV. */
export const zeroingScrubber: PageScrubber = Object.freeze({
    scrub(arena: PageArena, page: PageId): boolean {
        arena.scrub(page);
        return true;
    },

    async scrubOffThread(arena: PageArena, pages: readonly PageId[], threads: PageHasher): Promise<boolean> {
        await threads.zero(pages.map((page) => arena.zeroJob(page)));
        return true;
    }
});
