import type { WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import { NUM_PAGE_STATES, PageState } from "./PageState.js";
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
    /** Each page's details, in page order, of the pages that are not free (a free pool costs nothing here). */
    readonly ownedPages: OwnedPagesSnapshot;
}

export interface OwnedPagesSnapshot {
    readonly generations: Uint32Array;
    readonly tokenStarts: Uint32Array;
    /** Positions from `tokenStarts`, at most the page's token count. */
    readonly tokenCounts: Uint16Array;
    readonly validBytes: Uint32Array;
    /** xxh64 of the valid bytes while the page is sealed, else 0. */
    readonly checksums: BigUint64Array;
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
        numActiveLeases,
        ownedPages: snapshotOwnedPages(ledger)
    };
}

function snapshotOwnedPages(ledger: PageLedger): OwnedPagesSnapshot {
    const count = ledger.numPages - ledger.numFree;
    const owned = {
        generations: new Uint32Array(count),
        tokenStarts: new Uint32Array(count),
        tokenCounts: new Uint16Array(count),
        validBytes: new Uint32Array(count),
        checksums: new BigUint64Array(count)
    };
    let index = 0;
    for (let page = 0; page < ledger.numPages; page++) {
        const state = ledger.states[page] as PageState;
        if (state === PageState.Free) {
            continue;
        }
        invariant(index < count, () => `${index + 1} pages are not free, but the free list holds ${ledger.numFree} of ${ledger.numPages}`);
        const start = ledger.tokenStarts[page] as number;
        const numTokens = (ledger.tokenEnds[page] as number) - start;
        const generation = ledger.generations[page] as number;
        invariant(
            generation <= 0xffff_ffff && start <= 0xffff_ffff && numTokens >= 0 && numTokens <= 0xffff,
            () =>
                `page ${page} has generation ${generation} and tokens [${start}, ${start + numTokens}): beyond the snapshot's 32- and 16-bit fields`
        );
        owned.generations[index] = generation;
        owned.tokenStarts[index] = start;
        owned.tokenCounts[index] = numTokens;
        owned.validBytes[index] = ledger.numValidBytes[page] as number;
        owned.checksums[index] = state === PageState.Sealed ? (ledger.checksums[page] as bigint) : 0n;
        index++;
    }
    invariant(index === count, () => `${index} pages are not free, but the free list holds ${ledger.numFree} of ${ledger.numPages}`);
    return owned;
}
