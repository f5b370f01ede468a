import { MemoryTimeline } from "../memory/MemoryTimeline.js";

/** The place at the foot of the Memory view for the timeline of memory events (issue 39, item 2): renderer/memory/. */
export function MemoryTimelineSlot() {
    return <MemoryTimeline />;
}
