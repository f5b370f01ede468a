import { useMemo, useState } from "react";
import { memoryEventKinds, type MemoryEvent, type MemoryEventKind } from "../../contract/memoryEvents.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { ownerLabel } from "../pageMap/ownerLabel.js";
import { describePages } from "./describePages.js";
import { ReplayedPool } from "./ReplayedPool.js";
import { replayPageStates, type ReplayedPages } from "./replayPageStates.js";
import { useMemoryEvents } from "./useMemoryEvents.js";
import "./MemoryTimeline.css";

/** Rows the list shows, newest first; the slider reaches every event kept. */
const ROWS_SHOWN = 200;

/**
 * The memory timeline under the page map (issue 39): every event the engine recorded (kind,
 * workspace, pages, outcome, the numbers), filterable by kind; a slider that shows the pool as it
 * was at an earlier event; and the audit record's export as JSON Lines.
 */
export function MemoryTimeline() {
    const { rpc } = useAppServices();
    const { events, error } = useMemoryEvents();
    const snapshot = useEngineStore((state) => state.snapshot);
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const [kind, setKind] = useState<MemoryEventKind | "all">("all");
    /** The event scrubbed to, by seq; undefined follows the newest (live). */
    const [scrubSeq, setScrubSeq] = useState<number | undefined>(undefined);
    const [exportError, setExportError] = useState<string | undefined>(undefined);

    // Live, the page map above draws the pool; the owners per page are only worked out to replay a scrubbed moment.
    const current = useMemo((): ReplayedPages | undefined => {
        const pageMap = snapshot?.pageMap;
        if (pageMap === undefined) {
            return undefined;
        }
        const owners =
            scrubSeq === undefined ? [] : Array.from(pageMap.ownerSlots, (slot) => (slot === 0 ? undefined : pageMap.owners[slot - 1]));
        return { states: pageMap.states, owners };
    }, [snapshot, scrubSeq]);
    const scrubIndex = scrubSeq === undefined ? events.length - 1 : events.findIndex((event) => event.seq === scrubSeq);
    const scrubbed = scrubSeq === undefined ? undefined : events[scrubIndex];
    const replayed = useMemo(
        () => (current === undefined || scrubSeq === undefined ? current : replayPageStates(current, events, scrubSeq)),
        [current, events, scrubSeq]
    );
    const shown = useMemo(
        () =>
            events
                .filter((event) => kind === "all" || event.kind === kind)
                .slice(-ROWS_SHOWN)
                .reverse(),
        [events, kind]
    );
    const nameOf = (event: MemoryEvent): string => (event.workspace === undefined ? "" : ownerLabel(event.workspace, workspaces).name);

    const exportRecord = (): void => {
        setExportError(undefined);
        rpc.call("exportMemoryRecord", {}).then(
            ({ jsonl }) => {
                const link = document.createElement("a");
                link.href = URL.createObjectURL(new Blob([jsonl], { type: "application/x-ndjson" }));
                link.download = `kvault-memory-record-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl`;
                link.click();
                setTimeout(() => URL.revokeObjectURL(link.href), 0);
            },
            (failure: unknown) => setExportError(toRpcError(failure).message)
        );
    };

    return (
        <section className="memory-timeline" aria-label="Memory timeline">
            <header className="memory-timeline-header">
                <h3>Timeline</h3>
                <label>
                    Kind{" "}
                    <select value={kind} onChange={(change) => setKind(change.target.value as MemoryEventKind | "all")}>
                        <option value="all">all</option>
                        {memoryEventKinds.map((name) => (
                            <option key={name} value={name}>
                                {name}
                            </option>
                        ))}
                    </select>
                </label>
                <button type="button" aria-label="Export the memory record as JSON Lines" onClick={exportRecord}>
                    Export record (JSONL)
                </button>
            </header>
            {error !== undefined && (
                <p className="inline-error" role="alert">
                    The memory events could not be read: {error}
                </p>
            )}
            {exportError !== undefined && (
                <p className="inline-error" role="alert">
                    The record could not be exported: {exportError}
                </p>
            )}
            {events.length > 0 && (
                <div className="memory-timeline-scrub">
                    <input
                        type="range"
                        aria-label="Scrub the timeline"
                        min={0}
                        max={events.length - 1}
                        value={Math.max(0, scrubIndex)}
                        onChange={(change) => {
                            const index = Number(change.target.value);
                            setScrubSeq(index >= events.length - 1 ? undefined : events[index]!.seq);
                        }}
                    />
                    <button
                        type="button"
                        aria-label="Show the page map live again"
                        disabled={scrubSeq === undefined}
                        onClick={() => setScrubSeq(undefined)}
                    >
                        Live
                    </button>
                </div>
            )}
            {replayed !== undefined && (
                <ReplayedPool
                    pages={replayed}
                    drawn={scrubbed !== undefined}
                    label={scrubbed === undefined ? "Pool now" : `Pool after #${scrubbed.seq} ${scrubbed.kind}`}
                />
            )}
            {events.length === 0 && error === undefined && <p className="panel-note">No memory events yet.</p>}
            <ol className="memory-timeline-list" aria-label="Memory events, newest first">
                {shown.map((event) => (
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
                            onClick={() => setScrubSeq(event.seq)}
                        >
                            <span className="memory-event-seq">#{event.seq}</span>{" "}
                            <span className="memory-event-time">{new Date(event.at).toLocaleTimeString()}</span>{" "}
                            <span className="memory-event-kind">{event.kind}</span>{" "}
                            <span className="memory-event-workspace">{nameOf(event)}</span>{" "}
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
        </section>
    );
}
