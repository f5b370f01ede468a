import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestSpecification, Vitest } from "vitest/node";
import { afterEach, describe, expect, it } from "vitest";
import { LaneLock, laneRunDirectory } from "../../support/LaneLock.js";
import { LaneSequencer } from "../../support/LaneSequencer.js";
import { laneCores } from "../../support/pinToLaneCores.js";
import { takeTestLanes } from "../../support/takeTestLanes.js";

// The heavy projects run in two lanes of one file at a time (vitest.config.ts): each lane has its
// own cores, a file takes whichever lane is free (a whole-machine file both, in one order), a lane
// is one holder's at a time (and a dead holder's is taken over), and the order of the run puts the
// slowest single-lane files first and the whole-machine files last.
const root = "/repo";
const runIds: string[] = [];

function newRunId(): string {
    const runId = `unit-${process.pid}-${runIds.length}`;
    runIds.push(runId);
    return runId;
}

afterEach(() => {
    provided.clear();
    for (const runId of runIds.splice(0)) {
        fs.rmSync(laneRunDirectory(runId), { recursive: true, force: true });
    }
});

/** The pid of a process that has exited, as a dead holder's. */
function exitedPid(): number {
    return spawnSync(process.execPath, ["-e", "0"]).pid;
}

/** Writes a holder's lane directory by hand, as another process would have. */
function holdLaneAs(runId: string, laneIndex: number, pid: number): string {
    const laneDirectory = path.join(laneRunDirectory(runId), `lane-${laneIndex}`);
    fs.mkdirSync(laneDirectory, { recursive: true });
    fs.writeFileSync(path.join(laneDirectory, "owner"), String(pid));
    return laneDirectory;
}

/** Settles within `ms` milliseconds: "held" if `taking` resolved, else "waiting". */
async function stateAfter(taking: Promise<unknown>, ms: number): Promise<"held" | "waiting"> {
    const waited = new Promise<"waiting">((resolve) => setTimeout(() => resolve("waiting"), ms));
    return Promise.race([taking.then(() => "held" as const), waited]);
}

/** The lanes a taker holds, by index. */
function lanesHeld(locks: readonly LaneLock[]): readonly number[] {
    return locks.map((lock) => lock.lane);
}

/** What the sequencer provided to each project's workers. */
const provided = new Map<string, unknown>();

/** The part of a TestSpecification the sequencer reads. */
function spec(projectName: string, file: string, groupOrder: number): TestSpecification {
    const provide = (key: string, value: unknown): void => {
        provided.set(`${projectName}.${key}`, value);
    };
    return {
        moduleId: path.join(root, file),
        project: { name: projectName, config: { sequence: { groupOrder }, isolate: true }, provide }
    } as unknown as TestSpecification;
}

function sequencer(): LaneSequencer {
    const cache = { getFileTestResults: () => undefined, getFileStats: () => undefined };
    return new LaneSequencer({ config: { root }, cache } as unknown as Vitest);
}

function sortedPaths(sorted: readonly TestSpecification[]): readonly string[] {
    return sorted.map((file) => path.relative(root, file.moduleId));
}

describe("test lanes", () => {
    it("gives each of the two lanes its own half of the cores, and none on a 1-core machine", () => {
        expect(laneCores(0, 2)).toEqual({ start: 0, end: 1 });
        expect(laneCores(1, 2)).toEqual({ start: 1, end: 2 });
        expect(laneCores(0, 16)).toEqual({ start: 0, end: 8 });
        expect(laneCores(1, 16)).toEqual({ start: 8, end: 16 });
        expect(laneCores(1, 1)).toBeUndefined();
    });

    it("lets a second holder in only once the first has released the lane", async () => {
        const runId = newRunId();
        const first = new LaneLock(0, runId);
        const second = new LaneLock(0, runId);
        await first.acquire();
        const waiting = second.acquire();
        expect(await stateAfter(waiting, 500)).toBe("waiting");
        first.release();
        expect(await stateAfter(waiting, 5_000)).toBe("held");
        second.release();
    });

    it("gives a single-lane file the free lane while a live process holds the other, whichever it is", async () => {
        const runId = newRunId();
        holdLaneAs(runId, 0, process.ppid);
        const second = await takeTestLanes(runId, false);
        expect(lanesHeld(second)).toEqual([1]);
        second.forEach((lock) => lock.release());

        const otherRunId = newRunId();
        holdLaneAs(otherRunId, 1, process.ppid);
        const first = await takeTestLanes(otherRunId, false);
        expect(lanesHeld(first)).toEqual([0]);
    });

    it("lets two single-lane files run at once, and a third in when either frees its lane", async () => {
        const runId = newRunId();
        const first = await takeTestLanes(runId, false);
        const second = await takeTestLanes(runId, false);
        expect([...lanesHeld(first), ...lanesHeld(second)]).toEqual([0, 1]);
        const third = takeTestLanes(runId, false);
        expect(await stateAfter(third, 500)).toBe("waiting");
        second.forEach((lock) => lock.release());
        expect(await stateAfter(third, 5_000)).toBe("held");
        expect(lanesHeld(await third)).toEqual([1]);
    });

    it("gives a whole-machine file both lanes, only once the single-lane file beside it has freed its lane", async () => {
        const runId = newRunId();
        const singleLane = await takeTestLanes(runId, false);
        const wholeMachine = takeTestLanes(runId, true);
        expect(await stateAfter(wholeMachine, 500)).toBe("waiting");
        singleLane.forEach((lock) => lock.release());
        expect(await stateAfter(wholeMachine, 5_000)).toBe("held");
        expect(lanesHeld(await wholeMachine)).toEqual([0, 1]);
        const next = takeTestLanes(runId, false);
        expect(await stateAfter(next, 500)).toBe("waiting");
        (await wholeMachine).forEach((lock) => lock.release());
        expect(await stateAfter(next, 5_000)).toBe("held");
    });

    it("takes over a lane whose holder died without releasing it", async () => {
        const runId = newRunId();
        holdLaneAs(runId, 0, process.ppid);
        const laneDirectory = holdLaneAs(runId, 1, exitedPid());
        const locks = await takeTestLanes(runId, false);
        expect(lanesHeld(locks)).toEqual([1]);
        expect(fs.readFileSync(path.join(laneDirectory, "owner"), "utf8")).toBe(String(process.pid));
        locks.forEach((lock) => lock.release());
        expect(fs.existsSync(laneDirectory)).toBe(false);
    });

    it("orders a group without lanes slowest first, then the heavy group's single-lane files slowest first, whole-machine files last", async () => {
        const files = [
            spec("unit", "test/unit/a.test.ts", 0),
            spec("cli", "test/cli/makeModelCli.test.ts", 0),
            spec("model", "test/model/families/phi3.test.ts", 1),
            spec("gpu", "test/gpu/vulkanIsolation.test.ts", 1),
            spec("model", "test/model/runtime/gatherDecodes.test.ts", 1),
            spec("e2e", "test/e2e/settings.test.ts", 1),
            spec("e2e", "test/e2e/settingsBackends.test.ts", 1),
            spec("e2e", "test/e2e/login.test.ts", 1)
        ];
        const sorted = await sequencer().sort(files);
        expect(sortedPaths(sorted)).toEqual([
            "test/cli/makeModelCli.test.ts",
            "test/unit/a.test.ts",
            // three browser files and one model file: the browser files do not wait for one lane
            "test/e2e/settings.test.ts",
            "test/e2e/login.test.ts",
            "test/e2e/settingsBackends.test.ts",
            "test/model/families/phi3.test.ts",
            "test/gpu/vulkanIsolation.test.ts",
            "test/model/runtime/gatherDecodes.test.ts"
        ]);
        expect(provided.get("model.pinTestLanes")).toBe(true);
        expect(provided.get("e2e.pinTestLanes")).toBe(true);
        expect(provided.get("gpu.pinTestLanes")).toBe(true);
        // the cores the lanes split, as this (unpinned) process counts them: a reused worker may be pinned to one lane
        expect(provided.get("model.laneCoreCount")).toBe(os.availableParallelism());
    });

    it("pins the lanes for a run of two files of one kind, and keeps every core for one file beside whole-machine files", async () => {
        await sequencer().sort([
            spec("model", "test/model/families/phi3.test.ts", 1),
            spec("model", "test/model/families/gemma3.test.ts", 1)
        ]);
        expect(provided.get("model.pinTestLanes")).toBe(true);

        await sequencer().sort([
            spec("model", "test/model/families/phi3.test.ts", 1),
            spec("model", "test/model/runtime/gatherDecodes.test.ts", 1),
            spec("gpu", "test/gpu/vulkanIsolation.test.ts", 1)
        ]);
        expect(provided.get("model.pinTestLanes")).toBe(false);
    });
});
