import type { MemoryEvent, MemoryEventsPage } from "../../contract/memoryEvents.js";

/** How many events the engine keeps: older ones drop off the ring, seen by a reader as a gap in `seq`. */
export const MEMORY_EVENT_LOG_CAPACITY = 10_000;
/** The most events one `after()` returns, so that one RPC answer stays small; a reader asks again from the last seq. */
export const MAX_MEMORY_EVENTS_PER_CALL = 2_000;

/** An event as a part records it: the log stamps `seq` and `at`. */
export type MemoryEventInput = Omit<MemoryEvent, "seq" | "at">;

/** Where the engine's parts record what memory did (injected at construction; the no-op when none is). */
export interface MemoryEventSink {
    record(event: MemoryEventInput): void;
}

export const noMemoryEvents: MemoryEventSink = { record: () => undefined };

/**
 * The engine's memory timeline: a bounded ring of MemoryEvents, `seq` increasing by one from 1.
 * It holds ids, sizes, states, checksums and outcomes only; callers pass no prompt text, and the
 * event type has no field for any.
 */
export class MemoryEventLog implements MemoryEventSink {
    readonly #ring: (MemoryEvent | undefined)[];
    #nextSeq = 1;

    constructor(
        readonly capacity: number = MEMORY_EVENT_LOG_CAPACITY,
        private readonly now: () => number = Date.now
    ) {
        if (!Number.isSafeInteger(capacity) || capacity < 1) {
            throw new RangeError(`A memory event log holds at least 1 event; got a capacity of ${capacity}.`);
        }
        this.#ring = new Array<MemoryEvent | undefined>(capacity);
    }

    /** The seq the last event got (0 before the first). */
    get lastSeq(): number {
        return this.#nextSeq - 1;
    }

    record(event: MemoryEventInput): void {
        const seq = this.#nextSeq++;
        this.#ring[seq % this.capacity] = Object.freeze({ seq, at: this.now(), ...event });
    }

    /** The events after `afterSeq`, oldest first, at most `limit`; `oldestSeq` tells a reader whether it missed some. */
    after(afterSeq: number, limit: number = MAX_MEMORY_EVENTS_PER_CALL): MemoryEventsPage {
        const oldestSeq = Math.max(1, this.#nextSeq - this.capacity);
        const first = Math.max(afterSeq + 1, oldestSeq);
        const end = Math.min(this.#nextSeq, first + Math.max(0, Math.min(limit, MAX_MEMORY_EVENTS_PER_CALL)));
        const events: MemoryEvent[] = [];
        for (let seq = first; seq < end; seq++) {
            events.push(this.#ring[seq % this.capacity]!);
        }
        return { events, oldestSeq, lastSeq: this.lastSeq };
    }
}
