import type { WorkspaceId } from "../core/ids.js";
import { NUM_PAGE_STATES } from "./PageState.js";
import type { PageLedger } from "./PageLedger.js";

/**
 * The page map the UI draws, compact enough to send every frame for 65,536 pages
 * (about 320 KiB, two typed arrays, no per-page objects).
 */
export interface PagePoolSnapshot {
    /** `PageState` of each page, indexed by `PageId`. */
    readonly states: Uint8Array;
    /**
     * Owner of each page: 0 for a free page, otherwise `k`, meaning `workspaces[k - 1]`.
     * Quarantined pages still show the workspace whose bytes they hold until they are scrubbed.
     */
    readonly ownerSlots: Uint32Array;
    /** Workspaces that own at least one page, in order of their lowest page. */
    readonly workspaces: readonly WorkspaceId[];
    /** Pages in each state, indexed by `PageState`. */
    readonly numPagesByState: readonly number[];
    /** Leases held right now (readers and writers). */
    readonly numActiveLeases: number;
}

export function snapshotPageLedger(ledger: PageLedger, numActiveLeases: number): PagePoolSnapshot {
    const ownerSlots = new Uint32Array(ledger.numPages);
    const workspaces: WorkspaceId[] = [];
    const slotByWorkspace = new Map<WorkspaceId, number>();
    for (let page = 0; page < ledger.numPages; page++) {
        const owner = ledger.owners[page];
        if (owner === undefined) {
            continue;
        }
        let slot = slotByWorkspace.get(owner.workspace);
        if (slot === undefined) {
            workspaces.push(owner.workspace);
            slot = workspaces.length;
            slotByWorkspace.set(owner.workspace, slot);
        }
        ownerSlots[page] = slot;
    }
    return {
        states: ledger.states.slice(),
        ownerSlots,
        workspaces,
        numPagesByState: Array.from(ledger.numPagesByState.subarray(0, NUM_PAGE_STATES)),
        numActiveLeases
    };
}
