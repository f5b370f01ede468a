import { memo } from "react";
import type { MemoryEvent } from "../../contract/memoryEvents.js";
import { ownerLabel } from "../pageMap/ownerLabel.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { describePages } from "./describePages.js";

/**
 * The timeline's rows, newest first, each a button that scrubs to its event. Memoized: it renders
 * when the events, the filter or the scrubbed event change, not at each snapshot of the pool.
 */
export const MemoryEventList = memo(function MemoryEventList({
    events,
    scrubSeq,
    workspaces,
    onScrub
}: {
    readonly events: readonly MemoryEvent[];
    readonly scrubSeq: number | undefined;
    readonly workspaces: readonly Workspace[];
    readonly onScrub: (seq: number) => void;
}) {
    return (
        <ol className="memory-timeline-list" aria-label="Memory events, newest first">
            {events.map((event) => (
                <li
                    key={event.seq}
                    data-kind={event.kind}
                    data-outcome={event.outcome}
                    aria-current={event.seq === scrubSeq ? "true" : undefined}
                >
                    <button
                        type="button"
                        className="memory-event"
                        aria-label={`Show the pool as event ${event.seq}, ${event.kind}, left it`}
                        onClick={() => onScrub(event.seq)}
                    >
                        <span className="memory-event-seq">#{event.seq}</span>{" "}
                        <span className="memory-event-time">{new Date(event.at).toLocaleTimeString()}</span>{" "}
                        <span className="memory-event-kind">{event.kind}</span>{" "}
                        <span className="memory-event-workspace">
                            {event.workspace === undefined ? "" : ownerLabel(event.workspace, workspaces).name}
                        </span>{" "}
                        <span className="memory-event-pages">
                            {describePages(event.pages)}
                            {event.pageState === undefined ? "" : ` → ${event.pageState}`}
                        </span>{" "}
                        <span className="memory-event-outcome">{event.outcome}</span>
                        {event.detail !== undefined && <span className="memory-event-detail"> {event.detail}</span>}
                    </button>
                </li>
            ))}
        </ol>
    );
});
