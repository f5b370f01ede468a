// The memory timeline (issue 39): every event that changes what KV memory holds or proves it, as
// the engine records it, the Memory view draws it and the audit record keeps it on disk. An event
// holds ids, sizes, states, checksums and outcomes only: never a prompt's or an answer's text.

import type { PageStateName } from "./EngineSnapshot.js";

export const memoryEventKinds = [
    /** Pages taken for a workspace's request (admission asked first). */
    "reserved",
    /** Pages given back, their owner and generation ended (the scrub follows). */
    "released",
    /** A handoff began: prefill → host pages → decode. */
    "handoffStarted",
    /** Pages hashed and sealed after the prefill wrote them. */
    "sealed",
    /** Pages' checksums checked before decode read them. */
    "verified",
    /** A handoff or swap refused by an integrity check (a checksum, a generation, an owner). */
    "integrityRefused",
    /** A workspace's decode sequence saved to pages to free the sequence. */
    "swappedOut",
    /** A workspace's pages loaded back into a decode sequence. */
    "swappedIn",
    /** Pages zeroed before they return to the free list. */
    "scrubbed",
    /** A whole-state audit of the page pool ran. */
    "audited",
    /** A request refused before any page was taken (it does not fit: the numbers in `detail`). */
    "refused",
    /** Pages set aside after a failed check: never reused until the engine restarts. */
    "quarantined",
    /** A workspace's KV loaded from its encrypted file on disk instead of a prefill. */
    "loadedFromDisk"
] as const;
export type MemoryEventKind = (typeof memoryEventKinds)[number];

export interface MemoryEvent {
    /** Increasing by one per event within an engine's life: a gap means events were dropped from the ring. */
    readonly seq: number;
    /** Milliseconds since the epoch. */
    readonly at: number;
    readonly kind: MemoryEventKind;
    /** The workspace the pages belong to (its id, never its content). */
    readonly workspace?: string;
    /** The request (turn) it happened for. */
    readonly requestId?: string;
    /** The pages it touched, by index. */
    readonly pages?: readonly number[];
    /** The state those pages are in after the event: what the Memory view replays to show the map at that moment. */
    readonly pageState?: PageStateName;
    /** The reservation's generation the pages carry. */
    readonly generation?: number;
    readonly numTokens?: number;
    readonly numBytes?: number;
    /** xxh64 of the pages' bytes, hex, for seals and verifications. */
    readonly checksums?: readonly string[];
    readonly outcome: "ok" | "refused" | "failed";
    /** Numbers a user reads, e.g. "needs 9,214 tokens, 4,096 free". No prompt text. */
    readonly detail?: string;
    /**
     * The loaded local model whose engine recorded it (listLocalModels' id), set by the host's audit record
     * on every model's events but the host's own; absent: the host's own model's (as in older records).
     */
    readonly model?: string;
}

/** A model an exported audit record names. */
export interface MemoryRecordModel {
    /** listLocalModels' id, as its events' `model` names it; absent where the host runs one model. */
    readonly id?: string;
    /** The model's name and file as its engine loaded it; unknown (undefined, "") for one no longer loaded. */
    readonly name: string | undefined;
    readonly file: string;
    /** The host's own model: its events carry no `model`. */
    readonly primary: boolean;
}

/** The first line of an exported audit record (JSON Lines): what wrote it. */
export interface MemoryRecordHeader {
    readonly kind: "kvaultMemoryRecord";
    readonly kvaultVersion: string;
    /** The host's own model's name and file as its engine loaded it. */
    readonly model: { readonly name: string | undefined; readonly file: string };
    /** Every model loaded at the export, the host's own first, then any other whose events the record holds. */
    readonly models: readonly MemoryRecordModel[];
    readonly exportedAt: string;
    /** Events in this export, and the first and last seq. */
    readonly numEvents: number;
}

/** One answer of the engine's `memoryEvents` call: events after the seq asked, oldest first, bounded per call. */
export interface MemoryEventsPage {
    readonly events: readonly MemoryEvent[];
    /** The oldest seq the engine still holds: a reader whose last seq is below it missed the events between. */
    readonly oldestSeq: number;
    /** The newest seq recorded; a reader with fewer events than this asks again from its last. */
    readonly lastSeq: number;
}
