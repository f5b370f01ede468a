import type { WorkspaceId } from "../core/ids.js";

export interface QueueEntry {
    readonly workspace: WorkspaceId;
    /** Order of arrival, increasing. */
    readonly arrival: number;
}

/**
 * Who runs next when a decode sequence frees up: round robin across workspaces. Among waiting
 * entries whose workspace is not running a turn, the workspace served longest ago goes first;
 * within a workspace, arrival order. The scheduler asks for the order, then grants.
 */
export class FairQueue<E extends QueueEntry> {
    readonly #waiting: E[] = [];
    readonly #lastServed = new Map<WorkspaceId, number>();
    #numGrants = 0;

    get length(): number {
        return this.#waiting.length;
    }

    push(entry: E): void {
        this.#waiting.push(entry);
    }

    remove(entry: E): boolean {
        const index = this.#waiting.indexOf(entry);
        if (index < 0) {
            return false;
        }
        this.#waiting.splice(index, 1);
        return true;
    }

    /** The waiting entries in the order they would be granted, given the workspaces now busy. */
    order(busyWorkspaces: ReadonlySet<WorkspaceId>): E[] {
        const served = (entry: E): number => this.#lastServed.get(entry.workspace) ?? -1;
        return [...this.#waiting].sort((a, b) => {
            const busyA = busyWorkspaces.has(a.workspace) ? 1 : 0;
            const busyB = busyWorkspaces.has(b.workspace) ? 1 : 0;
            return busyA - busyB || served(a) - served(b) || a.arrival - b.arrival;
        });
    }

    /** 1-based place of `entry` in `order(busyWorkspaces)`. */
    positionOf(entry: E, busyWorkspaces: ReadonlySet<WorkspaceId>): number {
        return this.order(busyWorkspaces).indexOf(entry) + 1;
    }

    /** Takes the next entry whose workspace is not busy, or undefined. */
    next(busyWorkspaces: ReadonlySet<WorkspaceId>): E | undefined {
        const entry = this.order(busyWorkspaces)[0];
        if (entry === undefined || busyWorkspaces.has(entry.workspace)) {
            return undefined;
        }
        this.grant(entry);
        return entry;
    }

    /** Takes `entry` out of the queue as served now: its workspace goes to the back of the round. */
    grant(entry: E): void {
        if (this.remove(entry)) {
            this.#lastServed.set(entry.workspace, this.#numGrants++);
        }
    }
}
