import { describe, expect, it } from "vitest";
import { summarizeLaneTrace } from "../../support/summarizeLaneTrace.js";
import type { LaneEvent, LaneTraceLine } from "../../support/traceLanes.js";

const line = (event: LaneEvent, atMs: number, file: string, lanes: readonly number[] = []): LaneTraceLine => ({
    event,
    atMs,
    pid: 1,
    file,
    lanes
});

describe("summarizeLaneTrace", () => {
    it("pairs each file's take with its release, lane by lane, and counts the time between files and the files that held every lane", () => {
        const summary = summarizeLaneTrace([
            line("wait", 1_000, "a"),
            line("take", 1_000, "a", [0]),
            line("wait", 1_000, "b"),
            line("take", 1_500, "b", [1]),
            line("release", 5_000, "a", [0]),
            line("wait", 5_000, "c"),
            line("take", 5_200, "c", [0]),
            line("release", 6_500, "b", [1]),
            line("release", 7_200, "c", [0]),
            line("wait", 7_200, "whole"),
            line("take", 7_400, "whole", [0, 1]),
            line("release", 9_900, "whole", [0, 1]),
            line("wait", 9_900, "never freed"),
            line("take", 10_000, "never freed", [1])
        ]);
        expect(summary.lanes).toEqual([
            { lane: 0, numFiles: 3, firstTakeS: 0, lastReleaseS: 8.9, heldS: 8.5, idleS: 0.4 },
            { lane: 1, numFiles: 2, firstTakeS: 0.5, lastReleaseS: 8.9, heldS: 7.5, idleS: 0.9 }
        ]);
        expect(summary.holds).toEqual([
            { file: "b", numLanes: 1, heldS: 5 },
            { file: "a", numLanes: 1, heldS: 4 },
            { file: "whole", numLanes: 2, heldS: 2.5 },
            { file: "c", numLanes: 1, heldS: 2 }
        ]);
    });
});
