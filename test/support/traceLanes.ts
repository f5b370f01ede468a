import { appendFileSync } from "node:fs";
import type { LaneLock } from "./LaneLock.js";

/** A heavy file starts waiting for its lanes, takes them, or frees them. */
export type LaneEvent = "wait" | "take" | "release";

/** One line of the lane trace: a JSON object per event. */
export interface LaneTraceLine {
    readonly event: LaneEvent;
    /** Date.now() when it happened. */
    readonly atMs: number;
    /** The worker process. */
    readonly pid: number;
    /** The test file, relative to the repository root. */
    readonly file: string;
    /** The lanes it holds (none while it waits). */
    readonly lanes: readonly number[];
}

/** The environment variable that names the file a run's lane trace is appended to; unset, nothing is written. */
const LANE_TRACE_ENV = "KVAULT_LANE_TRACE";

/**
 * Appends `event` to the lane trace when KVAULT_LANE_TRACE names a file: where a run's heavy
 * files spent their time, lane by lane (test/support/summarizeLaneTrace.ts reads it).
 */
export function traceLanes(event: LaneEvent, file: string, locks: readonly LaneLock[]): void {
    const tracePath = process.env[LANE_TRACE_ENV];
    if (tracePath === undefined || tracePath === "") {
        return;
    }
    const line: LaneTraceLine = { event, atMs: Date.now(), pid: process.pid, file, lanes: locks.map((lock) => lock.lane) };
    appendFileSync(tracePath, `${JSON.stringify(line)}\n`);
}
