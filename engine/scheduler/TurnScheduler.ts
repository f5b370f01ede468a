import type { RequestId, WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { PagePool } from "../pages/PagePool.js";
import type { Reservation } from "../pages/Reservation.js";
import { EngineBusyError, RequestCancelledError } from "../request/requestErrors.js";
import type { WorkspaceRecord } from "../workspace/WorkspaceRecord.js";
import type { WorkspaceTable } from "../workspace/WorkspaceTable.js";
import { FairQueue, type QueueEntry } from "./FairQueue.js";
import { planPageGrants, planRoom, planTurnGrants, reclaimableSwaps } from "./schedulingPlans.js";

/** Longest a request waits for pages that running transfers hold, ms. */
export const PAGE_WAIT_MS = 60_000;

/** What a turn asks of the scheduler. */
export interface TurnAsk {
    readonly workspace: WorkspaceId;
    /** Aborting it takes the turn out of the queue. */
    readonly signal?: AbortSignal;
    /** Called when the turn must wait, with its 1-based place in the queue. */
    readonly onQueued?: (position: number) => void;
}

/** Where a transfer waits for pages: the scheduler, or in a unit test a stand-in. */
export interface PageWaits {
    /**
     * Resolves with what `take` returned, `take` having been called in the same synchronous step
     * that found (or made) room for `numPages`: nothing can take the pages between the two. `take`
     * reserves them; if it throws (its request ended), the wait rejects with that error.
     */
    reservePages(request: RequestId, numPages: number, take: () => Reservation): Promise<Reservation>;
    /**
     * Whether `reservePages` for `numPages` would be granted without waiting for a transfer to end:
     * no page wait is queued before it, and free pages, pages being zeroed off the engine's thread
     * and swapped pages the scheduler may take back cover it.
     */
    canGrantSoon(numPages: number): boolean;
}

interface TurnWaiter extends QueueEntry {
    readonly grant: () => void;
    readonly fail: (error: Error) => void;
}

interface PageWaiter {
    readonly request: RequestId;
    readonly numPages: number;
    readonly take: () => void;
    readonly fail: (error: Error) => void;
}

/**
 * Every grant, eviction and queue decision of the engine, in one place: which turn gets a decode
 * sequence (round robin across workspaces), which transfer gets pages and whose swapped pages are
 * taken back for it. `schedule()` plans with the pure functions of schedulingPlans.ts, then
 * applies; it runs whenever something it waits on changes (a turn ends, a workspace goes idle,
 * the pool frees pages), never on a timer that polls.
 */
export class TurnScheduler implements PageWaits {
    readonly #turns = new FairQueue<TurnWaiter>();
    readonly #pageWaits: PageWaiter[] = [];
    readonly #unwatch: () => void;
    #numRunning = 0;
    #numArrivals = 0;
    #clock = 0;
    #wakeQueued = false;
    #passQueued = false;
    #stopped: Error | undefined;

    constructor(
        private readonly workspaces: WorkspaceTable,
        private readonly pool: PagePool,
        /** Decode sequences: at most this many turns run at once. */
        private readonly numSequences: number
    ) {
        // Pages come free inside pool calls; the waiters are served once that call has returned.
        this.#unwatch = pool.watchFreedPages(() => this.#scheduleSoon());
    }

    get numQueued(): number {
        return this.#turns.length;
    }

    get numRunning(): number {
        return this.#numRunning;
    }

    get numPageWaits(): number {
        return this.#pageWaits.length;
    }

    /**
     * Waits, fairly across workspaces, until a decode sequence can be given to this turn, and takes
     * it: the run count and the workspace's busy mark change in the same synchronous step as the
     * grant, so two grants can never share a workspace or overcommit the sequences. Rejects only
     * before a grant; after one, the caller owns the turn and must `endTurn` it.
     */
    acquireTurn(ask: TurnAsk): Promise<WorkspaceRecord> {
        if (this.#stopped !== undefined) {
            return Promise.reject(this.#stopped);
        }
        const busy = this.#busyWorkspaces();
        if (this.#turns.length === 0 && this.#numRunning < this.numSequences && !busy.has(ask.workspace)) {
            return Promise.resolve(this.#take(ask.workspace));
        }
        return new Promise<WorkspaceRecord>((resolve, reject) => {
            const leave = (): void => {
                if (this.#turns.remove(waiter)) {
                    reject(new RequestCancelledError("admitted"));
                }
            };
            const waiter: TurnWaiter = {
                workspace: ask.workspace,
                arrival: this.#numArrivals++,
                grant: () => {
                    ask.signal?.removeEventListener("abort", leave);
                    resolve(this.#take(ask.workspace));
                },
                fail: (error) => {
                    ask.signal?.removeEventListener("abort", leave);
                    reject(error);
                }
            };
            this.#turns.push(waiter);
            ask.signal?.addEventListener("abort", leave, { once: true });
            ask.onQueued?.(this.#turns.positionOf(waiter, busy));
        });
    }

    /**
     * Ends a granted turn: the workspace is idle again, the most recently used, and the next turns
     * are granted in the next scheduling pass (`requestSchedule`), once the ended turn's caller
     * has seen its end.
     */
    endTurn(workspace: WorkspaceRecord): void {
        invariant(workspace.busy && this.#numRunning > 0, () => `turn of ${workspace.id} ended with ${this.#numRunning} running`);
        workspace.busy = false;
        workspace.lastUsed = ++this.#clock;
        this.#numRunning--;
        this.requestSchedule();
    }

    /**
     * Asks for one scheduling pass after the current step: once every promise callback the change
     * woke has run (so a turn's caller finishes with its turn, its last text flushed, before the
     * next turn of its workspace starts). Several changes in one step make one pass.
     */
    requestSchedule(): void {
        if (this.#passQueued || this.#stopped !== undefined) {
            return;
        }
        this.#passQueued = true;
        setImmediate(() => {
            this.#passQueued = false;
            this.schedule();
        });
    }

    canGrantSoon(numPages: number): boolean {
        const numComingFree = this.pool.numFreePages + this.pool.numPagesZeroing;
        return this.#pageWaits.length === 0 && planRoom(numPages, numComingFree, reclaimableSwaps(this.workspaces.all())) !== undefined;
    }

    reservePages(request: RequestId, numPages: number, take: () => Reservation): Promise<Reservation> {
        if (this.#stopped !== undefined) {
            return Promise.reject(this.#stopped);
        }
        return new Promise<Reservation>((resolve, reject) => {
            const timer = setTimeout(() => {
                this.#removePageWait(waiter);
                reject(
                    new EngineBusyError(
                        `The handoff needs ${numPages} pages and only ${this.pool.numFreePages} of ${this.pool.config.numPages} came free in ` +
                            `${PAGE_WAIT_MS / 1000} s (running requests hold the rest). Retry, or give the pool more pages.`
                    )
                );
            }, PAGE_WAIT_MS);
            timer.unref?.();
            const waiter: PageWaiter = {
                request,
                numPages,
                take: () => {
                    clearTimeout(timer);
                    try {
                        resolve(take());
                    } catch (error) {
                        reject(error instanceof Error ? error : new Error(String(error)));
                    }
                },
                fail: (error) => {
                    clearTimeout(timer);
                    reject(error);
                }
            };
            this.#pageWaits.push(waiter);
            this.#schedulePages(); // served at once when the pool has room and no one waits before it
        });
    }

    /** A request that ended stops waiting for pages: its wait rejects with `error`. */
    abandonPages(request: RequestId, error: Error): void {
        for (const waiter of this.#pageWaits.filter((entry) => entry.request === request)) {
            this.#removePageWait(waiter);
            waiter.fail(error);
        }
    }

    /**
     * Plans and applies: grants waiting turns while decode sequences are free, then meets page
     * waits in arrival order, releasing swapped workspaces' pages (least recently used first)
     * where that makes the room.
     */
    schedule(): void {
        if (this.#stopped !== undefined) {
            return;
        }
        const busy = this.#busyWorkspaces();
        for (const waiter of planTurnGrants(this.#turns.order(busy), busy, this.numSequences - this.#numRunning)) {
            this.#turns.grant(waiter);
            waiter.grant();
        }
        this.#schedulePages();
    }

    /** Fails every waiting turn and page wait with `error`; nothing is granted afterwards. Idempotent. */
    stop(error: Error): void {
        if (this.#stopped !== undefined) {
            return;
        }
        this.#stopped = error;
        this.#unwatch();
        for (const waiter of this.#turns.order(new Set())) {
            this.#turns.remove(waiter);
            waiter.fail(error);
        }
        for (const waiter of this.#pageWaits.splice(0)) {
            waiter.fail(error);
        }
    }

    #schedulePages(): void {
        if (this.#pageWaits.length === 0) {
            return;
        }
        // pages being zeroed off the engine's thread count as free: they are, in a moment, and wake the waits then
        const numComingFree = this.pool.numFreePages + this.pool.numPagesZeroing;
        const plan = planPageGrants(this.#pageWaits, numComingFree, reclaimableSwaps(this.workspaces.all()));
        this.workspaces.dropSwaps(plan.drops.map((swapped) => swapped.workspace));
        for (const waiter of plan.grants) {
            if (!this.pool.canReserve(waiter.numPages)) {
                break; // a page still leased or being zeroed: it comes free, and wakes the waits, when that ends
            }
            this.#removePageWait(waiter);
            waiter.take();
        }
    }

    #scheduleSoon(): void {
        if (this.#wakeQueued || this.#pageWaits.length === 0) {
            return;
        }
        this.#wakeQueued = true;
        queueMicrotask(() => {
            this.#wakeQueued = false;
            this.schedule();
        });
    }

    #take(workspaceId: WorkspaceId): WorkspaceRecord {
        const workspace = this.workspaces.get(workspaceId);
        invariant(
            !workspace.busy && this.#numRunning < this.numSequences,
            () =>
                `a turn of ${workspaceId} was granted with the workspace busy or ${this.#numRunning} of ${this.numSequences} sequences running`
        );
        workspace.busy = true;
        this.#numRunning++;
        return workspace;
    }

    #removePageWait(waiter: PageWaiter): void {
        const index = this.#pageWaits.indexOf(waiter);
        if (index >= 0) {
            this.#pageWaits.splice(index, 1);
        }
    }

    #busyWorkspaces(): Set<WorkspaceId> {
        return new Set(
            this.workspaces
                .all()
                .filter((workspace) => workspace.busy)
                .map((workspace) => workspace.id)
        );
    }
}
