import { MemoryTimeline } from "../memory/MemoryTimeline.js";
import { useViewStore } from "./viewStore.js";

/**
 * The place at the foot of the Memory view for the timeline of memory events (issue 39, item 2):
 * renderer/memory/. Mounted only while the Memory view is shown, so that a hidden view neither
 * polls the engine's events nor renders them beside a chat; on showing, it reads the engine's ring again.
 */
export function MemoryTimelineSlot() {
    const shown = useViewStore((state) => state.view === "memory");
    return shown ? <MemoryTimeline /> : null;
}
