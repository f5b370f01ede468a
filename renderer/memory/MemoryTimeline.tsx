import { Pause, Play } from "lucide-react";
import { useEffect, useMemo, useState } from "react";
import { memoryEventKinds, type MemoryEventKind } from "../../contract/memoryEvents.js";
import { useAppServices } from "../AppServices.js";
import { usePoolReplayStore } from "../pageMap/poolReplayStore.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { MemoryEventList } from "./MemoryEventList.js";
import { memoryEventSteps } from "./memoryEventSteps.js";
import { replayPageStates } from "./replayPageStates.js";
import { useMemoryEvents } from "./useMemoryEvents.js";
import "./MemoryTimeline.css";

/** Rows the list shows, newest first; the slider reaches every event kept. */
const ROWS_SHOWN = 200;
/** How long Play shows each event on the map before the next (ms): slow enough to follow a handoff that took milliseconds. */
const PLAY_STEP_MS = 600;

/**
 * The memory timeline under the page map (issue 39): every event the engine recorded (kind,
 * workspace, pages, outcome, the numbers), filterable by kind; a slider, and Play, that draw the
 * pool on the map above as it was at an earlier event (poolReplayStore); and the audit record's
 * export as JSON Lines.
 */
export function MemoryTimeline() {
    const { rpc } = useAppServices();
    const { events, error } = useMemoryEvents();
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const [kind, setKind] = useState<MemoryEventKind | "all">("all");
    /** The event scrubbed to, by seq; undefined follows the newest (live). */
    const [scrubSeq, setScrubSeq] = useState<number | undefined>(undefined);
    const [playing, setPlaying] = useState(false);
    const [exportError, setExportError] = useState<string | undefined>(undefined);
    // Live, the map draws the snapshot itself: this view reads the snapshot only to replay a scrubbed moment.
    const pageMap = useEngineStore((state) => (scrubSeq === undefined ? undefined : state.snapshot?.pageMap));

    const scrubIndex = scrubSeq === undefined ? events.length - 1 : events.findIndex((event) => event.seq === scrubSeq);
    const scrubbed = scrubSeq === undefined ? undefined : events[scrubIndex];
    useEffect(() => {
        if (pageMap === undefined || scrubbed === undefined) {
            usePoolReplayStore.setState({ replay: undefined });
            return;
        }
        const owners = Array.from(pageMap.ownerSlots, (slot) => (slot === 0 ? undefined : pageMap.owners[slot - 1]));
        const pages = replayPageStates({ states: pageMap.states, owners }, events, scrubbed.seq);
        const label = `Pool after #${scrubbed.seq} ${scrubbed.kind}`;
        usePoolReplayStore.setState({ replay: { pages, event: scrubbed, label, step: memoryEventSteps[scrubbed.kind] } });
    }, [pageMap, events, scrubbed]);
    useEffect(() => () => usePoolReplayStore.setState({ replay: undefined }), []);

    // Play steps through the events from the scrubbed one (live: from the last handoff's start) to live, one a step.
    useEffect(() => {
        if (!playing) {
            return;
        }
        const timer = setTimeout(() => {
            const next = events[scrubIndex + 1];
            setScrubSeq(next === undefined || scrubIndex + 1 >= events.length - 1 ? undefined : next.seq);
            setPlaying(next !== undefined && scrubIndex + 1 < events.length - 1);
        }, PLAY_STEP_MS);
        return () => clearTimeout(timer);
    }, [playing, events, scrubIndex]);
    const play = (): void => {
        if (playing) {
            setPlaying(false);
            return;
        }
        if (scrubSeq === undefined) {
            const start = events.findLast((event) => event.kind === "handoffStarted") ?? events[0];
            setScrubSeq(start?.seq);
        }
        setPlaying(true);
    };

    const shown = useMemo(
        () =>
            events
                .filter((event) => kind === "all" || event.kind === kind)
                .slice(-ROWS_SHOWN)
                .reverse(),
        [events, kind]
    );

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
                    <button
                        type="button"
                        aria-label={playing ? "Pause the replay on the map" : "Play the events on the map, one at a time, up to now"}
                        aria-pressed={playing}
                        onClick={play}
                    >
                        {playing ? <Pause size={14} aria-hidden="true" /> : <Play size={14} aria-hidden="true" />}
                    </button>
                    <input
                        type="range"
                        aria-label="Scrub the timeline"
                        min={0}
                        max={events.length - 1}
                        value={Math.max(0, scrubIndex)}
                        onChange={(change) => {
                            const index = Number(change.target.value);
                            setPlaying(false);
                            setScrubSeq(index >= events.length - 1 ? undefined : events[index]!.seq);
                        }}
                    />
                    <button
                        type="button"
                        aria-label="Show the page map live again"
                        disabled={scrubSeq === undefined}
                        onClick={() => {
                            setPlaying(false);
                            setScrubSeq(undefined);
                        }}
                    >
                        Live
                    </button>
                </div>
            )}
            {events.length === 0 && error === undefined && <p className="panel-note">No memory events yet.</p>}
            <MemoryEventList events={shown} scrubSeq={scrubSeq} workspaces={workspaces} onScrub={setScrubSeq} />
        </section>
    );
}
