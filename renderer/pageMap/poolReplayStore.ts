import { create } from "zustand";
import type { MemoryEvent } from "../../contract/memoryEvents.js";
import type { PoolPages } from "./poolPicture.js";

/** The pool as an earlier event left it, which the map draws instead of the live pool while the timeline is scrubbed. */
export interface PoolReplay {
    readonly pages: PoolPages;
    /** The event scrubbed to: its pages are outlined on the map, and its step named above it. */
    readonly event: MemoryEvent;
    /** What the moment was, in words: "Pool after #12 sealed". */
    readonly label: string;
    /** Where a handoff was at that event ("prefill done: its pages sealed"), when the event is one of a handoff's. */
    readonly step: string | undefined;
}

/** UI-only state (never the engine's): the replay the timeline asks the map to draw; undefined draws the pool live. */
export const usePoolReplayStore = create<{ readonly replay: PoolReplay | undefined }>()(() => ({ replay: undefined }));
