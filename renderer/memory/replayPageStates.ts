import { pageStateNames } from "../../contract/EngineSnapshot.js";
import type { MemoryEvent } from "../../contract/memoryEvents.js";

/** The pool's pages as they were at one event: each page's state number (an index into `pageStateNames`) and owner. */
export interface ReplayedPages {
    readonly states: Uint8Array;
    readonly owners: readonly (string | undefined)[];
}

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

/** Pages by state name, for the words beside the replayed map. */
export function countStates(states: Uint8Array): Record<(typeof pageStateNames)[number], number> {
    const counts = Object.fromEntries(pageStateNames.map((name) => [name, 0])) as Record<(typeof pageStateNames)[number], number>;
    for (const state of states) {
        const name = pageStateNames[state];
        if (name !== undefined) {
            counts[name]++;
        }
    }
    return counts;
}
