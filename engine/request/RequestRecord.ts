import type { RequestId, WorkspaceId } from "../core/ids.js";
import { invariant } from "../core/invariant.js";
import type { PagePool } from "../pages/PagePool.js";
import type { Reservation } from "../pages/Reservation.js";
import { RequestCancelledError } from "./requestErrors.js";
import { isTerminal, type LiveStage, type RequestStatus, type TerminalStatus } from "./RequestStatus.js";

/** What the engine hears of a request's life: every stage it enters, and its one terminal status. */
export interface RequestEvents {
    onStage?(request: RequestId, status: LiveStage): void;
    onTerminal(record: RequestRecord, status: TerminalStatus): void;
}

/**
 * One request's bookkeeping: its status, and the pages it holds. Reaching a terminal status
 * releases its pages, exactly once (I4); a cancel releases them at once, and the pool keeps them
 * quarantined until in-flight leases drain.
 */
export class RequestRecord {
    #status: RequestStatus = { kind: "admitted" };
    #reservation: Reservation | undefined;
    #pagesReleased = false;
    #endedDuring: RequestStatus["kind"] = "admitted";

    constructor(
        readonly id: RequestId,
        readonly workspace: WorkspaceId,
        private readonly pool: PagePool,
        private readonly events: RequestEvents
    ) {}

    get status(): RequestStatus {
        return this.#status;
    }

    get isTerminal(): boolean {
        return isTerminal(this.#status);
    }

    /** The stage the request was in when it reached its terminal status. */
    get endedDuring(): RequestStatus["kind"] {
        return this.#endedDuring;
    }

    /** The generation of the pages this request holds right now, if any. */
    get heldGeneration(): number | undefined {
        return this.#reservation !== undefined && !this.#pagesReleased ? this.#reservation.generation : undefined;
    }

    get reservation(): Reservation | undefined {
        return this.#reservation;
    }

    /** Moves to a live stage; a terminal request stays terminal and the caller must stop. */
    advance(status: LiveStage): boolean {
        if (this.isTerminal) {
            return false;
        }
        this.#status = status;
        return true;
    }

    /** Moves to a live stage and reports it; throws `RequestCancelledError` when the request has already ended. */
    enter(status: LiveStage): void {
        if (!this.advance(status)) {
            this.throwIfEnded();
        }
        this.events.onStage?.(this.id, status);
    }

    /** Every step of a request first asks this: an ended request reaches no transfer or decode step. */
    throwIfEnded(): void {
        if (this.isTerminal) {
            throw new RequestCancelledError(this.#endedDuring);
        }
    }

    /** Takes ownership of a reservation; a request holds one at a time (a handoff with history uses two, one after the other). */
    holdPages(reservation: Reservation): void {
        invariant(
            this.#reservation === undefined || this.#pagesReleased,
            () =>
                `request ${this.id} takes a second reservation (generation ${reservation.generation}) while holding ${this.#reservation?.generation}`
        );
        invariant(!this.isTerminal, () => `request ${this.id} reserves pages while ${this.#status.kind}`);
        this.#reservation = reservation;
        this.#pagesReleased = false;
    }

    /** Returns the pages to the pool (quarantine, then scrub). Idempotent. */
    releasePages(): void {
        if (this.#reservation === undefined || this.#pagesReleased) {
            return;
        }
        this.#pagesReleased = true;
        const released = this.pool.release(this.#reservation);
        invariant(
            released.ok,
            () =>
                `request ${this.id} could not release generation ${this.#reservation?.generation}: ${released.ok ? "" : released.error.message}`
        );
    }

    /** The one way into a terminal status. Returns false, changing nothing, when already terminal. */
    finish(status: TerminalStatus): boolean {
        if (this.isTerminal) {
            return false;
        }
        this.#endedDuring = this.#status.kind;
        this.#status = status;
        this.releasePages();
        this.events.onTerminal(this, status);
        return true;
    }
}
