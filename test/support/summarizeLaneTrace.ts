// Where a run's heavy files spent their lanes, from the trace KVAULT_LANE_TRACE wrote (traceLanes.ts):
//   KVAULT_LANE_TRACE=/tmp/lanes.jsonl npx vitest run
//   node --import tsx test/support/summarizeLaneTrace.ts /tmp/lanes.jsonl
import { readFileSync } from "node:fs";
import type { LaneTraceLine } from "./traceLanes.js";

export interface LaneSummary {
    readonly lane: number;
    readonly numFiles: number;
    /** Seconds from the run's first traced event to this lane's first take and last release. */
    readonly firstTakeS: number;
    readonly lastReleaseS: number;
    /** Seconds some file held it. */
    readonly heldS: number;
    /** Seconds between one file's release and the next file's take. */
    readonly idleS: number;
}

export interface FileHold {
    readonly file: string;
    readonly numLanes: number;
    readonly heldS: number;
}

export interface LaneTraceSummary {
    readonly lanes: readonly LaneSummary[];
    /** Every file that took its lanes and freed them, the longest first. */
    readonly holds: readonly FileHold[];
}

/** Pairs each file's take with its release, lane by lane. A file traced twice (a rerun) counts its last pair. */
export function summarizeLaneTrace(lines: readonly LaneTraceLine[]): LaneTraceSummary {
    const startMs = Math.min(...lines.map((line) => line.atMs));
    const byFile = new Map<string, { takeMs?: number; releaseMs?: number; lanes: readonly number[] }>();
    for (const line of lines) {
        if (line.event === "take") {
            byFile.set(line.file, { takeMs: line.atMs, lanes: line.lanes });
        } else if (line.event === "release") {
            byFile.set(line.file, { ...(byFile.get(line.file) ?? { lanes: [] }), releaseMs: line.atMs });
        }
    }
    const spans = [...byFile].flatMap(([file, { takeMs, releaseMs, lanes }]) =>
        takeMs === undefined || releaseMs === undefined ? [] : [{ file, takeMs, releaseMs, lanes }]
    );
    const seconds = (ms: number): number => ms / 1000;
    const laneNumbers = [...new Set(spans.flatMap((span) => span.lanes))].sort((a, b) => a - b);
    const lanes = laneNumbers.map((lane): LaneSummary => {
        const held = spans.filter((span) => span.lanes.includes(lane)).sort((a, b) => a.takeMs - b.takeMs);
        return {
            lane,
            numFiles: held.length,
            firstTakeS: seconds(held[0]!.takeMs - startMs),
            lastReleaseS: seconds(Math.max(...held.map((span) => span.releaseMs)) - startMs),
            heldS: seconds(held.reduce((sum, span) => sum + (span.releaseMs - span.takeMs), 0)),
            idleS: seconds(held.slice(1).reduce((sum, span, index) => sum + Math.max(0, span.takeMs - held[index]!.releaseMs), 0))
        };
    });
    const holds = spans
        .map((span) => ({ file: span.file, numLanes: span.lanes.length, heldS: seconds(span.releaseMs - span.takeMs) }))
        .sort((a, b) => b.heldS - a.heldS);
    return { lanes, holds };
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
    const [tracePath, count = "25"] = process.argv.slice(2);
    if (tracePath === undefined) {
        console.error("Usage: node --import tsx test/support/summarizeLaneTrace.ts TRACE.jsonl [NUMBER_OF_FILES]");
        process.exit(2);
    }
    const lines = readFileSync(tracePath, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as LaneTraceLine);
    const { lanes, holds } = summarizeLaneTrace(lines);
    for (const lane of lanes) {
        console.log(
            `lane ${lane.lane}: ${lane.numFiles} files, ${lane.firstTakeS.toFixed(0)}–${lane.lastReleaseS.toFixed(0)} s, held ${lane.heldS.toFixed(0)} s, idle between files ${lane.idleS.toFixed(1)} s`
        );
    }
    const bothLanes = holds.filter((hold) => hold.numLanes > 1).reduce((sum, hold) => sum + hold.heldS, 0);
    console.log(`files holding every lane: ${bothLanes.toFixed(0)} s`);
    for (const hold of holds.slice(0, Number(count))) {
        console.log(`${hold.heldS.toFixed(1).padStart(6)} s  ${hold.numLanes > 1 ? "every lane " : ""}${hold.file}`);
    }
}
