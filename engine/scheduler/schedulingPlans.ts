import type { WorkspaceId } from "../core/ids.js";
import type { WorkspaceRecord } from "../workspace/WorkspaceRecord.js";
import type { QueueEntry } from "./FairQueue.js";

// The scheduler's decisions as pure functions of what it sees: which waiting turns get a decode
// sequence, which page waits are met and by dropping whose swapped pages, which workspace gives up
// its sequence. They change nothing; TurnScheduler and WorkspaceTable apply what they return.

/**
 * The waiting turns to grant now, in grant order: at most `numFreeSequences`, taken from `order`
 * (the fair queue's order, busy workspaces last), never two of one workspace nor one of a busy one.
 */
export function planTurnGrants<E extends QueueEntry>(
    order: readonly E[],
    busyWorkspaces: ReadonlySet<WorkspaceId>,
    numFreeSequences: number
): E[] {
    const granted: E[] = [];
    const busy = new Set(busyWorkspaces);
    for (const entry of order) {
        if (granted.length >= numFreeSequences) {
            break;
        }
        if (!busy.has(entry.workspace)) {
            granted.push(entry);
            busy.add(entry.workspace);
        }
    }
    return granted;
}

/** A swapped workspace as room planning sees it: pages it would give back, and when it last ran. */
export interface SwappedPages {
    readonly workspace: WorkspaceRecord;
    readonly numPages: number;
}

/** Swapped workspaces that are not running a turn, least recently used first: the order their pages are taken back. */
export function reclaimableSwaps(workspaces: readonly WorkspaceRecord[]): SwappedPages[] {
    const swapped: SwappedPages[] = [];
    for (const workspace of workspaces) {
        if (workspace.residency.kind === "swapped" && !workspace.busy) {
            swapped.push({ workspace, numPages: workspace.residency.reservation.pages.length });
        }
    }
    return swapped.sort((a, b) => a.workspace.lastUsed - b.workspace.lastUsed);
}

/**
 * The swapped workspaces, least recently used first, whose pages must be released so that
 * `numPages` can be reserved: none when `numFreePages` suffice, undefined when even all of them
 * would not (then none is dropped: a workspace loses its KV only when that makes the room).
 */
export function planRoom(numPages: number, numFreePages: number, reclaimable: readonly SwappedPages[]): SwappedPages[] | undefined {
    const drops: SwappedPages[] = [];
    let numFree = numFreePages;
    for (const swapped of reclaimable) {
        if (numFree >= numPages) {
            break;
        }
        drops.push(swapped);
        numFree += swapped.numPages;
    }
    return numFree >= numPages ? drops : undefined;
}

/**
 * Which page waits, first come first served, are met now, and the swapped pages dropped to meet
 * them. A wait that cannot be met stops the rest: a large handoff is not starved by small ones.
 */
export function planPageGrants<W extends { readonly numPages: number }>(
    waits: readonly W[],
    numFreePages: number,
    reclaimable: readonly SwappedPages[]
): { readonly grants: W[]; readonly drops: SwappedPages[] } {
    const grants: W[] = [];
    const drops: SwappedPages[] = [];
    let numFree = numFreePages;
    let remaining = reclaimable;
    for (const wait of waits) {
        const room = planRoom(wait.numPages, numFree, remaining);
        if (room === undefined) {
            break;
        }
        drops.push(...room);
        remaining = remaining.slice(room.length);
        numFree += room.reduce((sum, swapped) => sum + swapped.numPages, 0) - wait.numPages;
        grants.push(wait);
    }
    return { grants, drops };
}

/** The workspace to swap out for a decode sequence when none is free: the least recently used resident one not running a turn. */
export function planEviction(workspaces: readonly WorkspaceRecord[]): WorkspaceRecord | undefined {
    let victim: WorkspaceRecord | undefined;
    for (const workspace of workspaces) {
        if (workspace.residency.kind === "resident" && !workspace.busy && (victim === undefined || workspace.lastUsed < victim.lastUsed)) {
            victim = workspace;
        }
    }
    return victim;
}
