import { pageStateNames, type PageStateName } from "../../contract/EngineSnapshot.js";
import type { DecodedPageMap } from "./decodeSnapshot.js";

export type PageCounts = Record<PageStateName, number>;

export interface OwnerPages {
    /** A workspace id; undefined for pages that have a state but no owner. */
    readonly owner: string | undefined;
    readonly numPages: number;
    readonly byState: PageCounts;
}

export interface PageMapSummary {
    readonly numPages: number;
    readonly byState: PageCounts;
    /** Owners holding at least one page, in the snapshot's slot order; unowned non-free pages last. */
    readonly owners: readonly OwnerPages[];
}

/** Pages by state and by owner, counted from the arrays themselves (what the canvas draws). */
export function summarizePageMap(pageMap: DecodedPageMap): PageMapSummary {
    const byState = emptyCounts();
    const bySlot = new Map<number, PageCounts>();
    for (let page = 0; page < pageMap.numPages; page++) {
        const state = pageStateNames[pageMap.states[page]!]!;
        byState[state]++;
        if (state === "free") {
            continue;
        }
        const slot = pageMap.ownerSlots[page]!;
        const counts = bySlot.get(slot) ?? emptyCounts();
        counts[state]++;
        bySlot.set(slot, counts);
    }
    const slots = [...bySlot.keys()].sort((a, b) => (a === 0 ? Infinity : a) - (b === 0 ? Infinity : b));
    return {
        numPages: pageMap.numPages,
        byState,
        owners: slots.map((slot) => {
            const counts = bySlot.get(slot)!;
            return {
                owner: slot === 0 ? undefined : pageMap.owners[slot - 1],
                numPages: pageStateNames.reduce((sum, name) => sum + counts[name], 0),
                byState: counts
            };
        })
    };
}

function emptyCounts(): PageCounts {
    return { free: 0, reserved: 0, written: 0, sealed: 0, quarantined: 0 };
}
