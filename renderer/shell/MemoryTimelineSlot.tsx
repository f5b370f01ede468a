/**
 * The place at the foot of the Memory view for the timeline of memory events (issue 39, item 2:
 * reservations, handoffs, seals, swaps, scrubs, audits), which another change fills. Empty until then.
 */
export function MemoryTimelineSlot() {
    return null;
}
