import { pageStateNames } from "../../contract/EngineSnapshot.js";
import type { MemoryEvent } from "../../contract/memoryEvents.js";
import type { PoolPages } from "../pageMap/poolPicture.js";

/** The pool's pages as they were at one event. */
export type ReplayedPages = PoolPages;

const FREE = pageStateNames.indexOf("free");

/**
 * The pool as it was right after event `atSeq`, from the current pages and the events: a page no
 * event after `atSeq` touched is as it is now; a page one did is in the state the last event at or
 * before `atSeq` left it in, or free when none did (every page starts free, and the timeline starts
 * with the engine). Replaying events over the live snapshot, rather than keeping a snapshot per
 * event, costs nothing while the user does not scrub, whatever the pool's size and the event rate.
 * Where the ring dropped events (a gap in seq) a page may show free that was not.
 */
export function replayPageStates(current: ReplayedPages, events: readonly MemoryEvent[], atSeq: number): ReplayedPages {
    const states = current.states.slice();
    const owners = [...current.owners];
    const touchedLater = new Set<number>();
    for (const event of events) {
        if (event.seq > atSeq) {
            for (const page of event.pages ?? []) {
                touchedLater.add(page);
            }
        }
    }
    for (const page of touchedLater) {
        if (page < states.length) {
            states[page] = FREE;
            owners[page] = undefined;
        }
    }
    for (const event of events) {
        if (event.seq > atSeq || event.pageState === undefined || event.outcome !== "ok") {
            continue;
        }
        const state = pageStateNames.indexOf(event.pageState);
        for (const page of event.pages ?? []) {
            if (touchedLater.has(page) && page < states.length) {
                states[page] = state;
                owners[page] = state === FREE ? undefined : event.workspace;
            }
        }
    }
    return { states, owners };
}
