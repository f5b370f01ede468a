import type { SessionId } from "../core/ids.js";
import { NUM_PAGE_STATES } from "./PageState.js";
import type { PageTable } from "./PageTable.js";

/**
 * The page map the UI draws, compact enough to send every frame for 65,536 pages
 * (about 320 KiB, two typed arrays, no per-page objects).
 */
export interface PagePoolSnapshot {
    /** `PageState` of each page, indexed by `PageId`. */
    readonly states: Uint8Array;
    /**
     * Owner of each page: 0 for a free page, otherwise `k`, meaning `sessions[k - 1]`.
     * Quarantined pages still show the session whose bytes they hold until they are scrubbed.
     */
    readonly ownerSlots: Uint32Array;
    /** Sessions that own at least one page, in order of their lowest page. */
    readonly sessions: readonly SessionId[];
    /** Pages in each state, indexed by `PageState`. */
    readonly numPagesByState: readonly number[];
    /** Leases held right now (readers and writers). */
    readonly numActiveLeases: number;
}

export function snapshotPageTable(table: PageTable, numActiveLeases: number): PagePoolSnapshot {
    const ownerSlots = new Uint32Array(table.numPages);
    const sessions: SessionId[] = [];
    const slotBySession = new Map<SessionId, number>();
    for (let page = 0; page < table.numPages; page++) {
        const owner = table.owners[page];
        if (owner === undefined) {
            continue;
        }
        let slot = slotBySession.get(owner.session);
        if (slot === undefined) {
            sessions.push(owner.session);
            slot = sessions.length;
            slotBySession.set(owner.session, slot);
        }
        ownerSlots[page] = slot;
    }
    return {
        states: table.states.slice(),
        ownerSlots,
        sessions,
        numPagesByState: Array.from(table.numPagesByState.subarray(0, NUM_PAGE_STATES)),
        numActiveLeases
    };
}
