import { relative } from "node:path";
import { afterAll, expect, inject } from "vitest";
import type { LaneLock } from "./LaneLock.js";
import { pinToAllCores, pinToLaneCores } from "./pinToLaneCores.js";
import { takeTestLanes } from "./takeTestLanes.js";
import { traceLanes, type LaneEvent } from "./traceLanes.js";
import { needsWholeMachine } from "./testLanes.js";

// A setup file of the heavy projects: the file waits here, before its own imports, until it holds a
// free lane (or both, if it needs the whole machine), runs on that lane's cores when it holds one and
// the run has work for both, and frees its lanes after its last afterAll (setup-file hooks run last)
// or on exit. A worker runs one file after another (the heavy projects do not isolate files), so each
// file sets the worker's cores afresh.
const runId = process.env.KVAULT_TEST_RUN_ID;
const projectName = process.env.KVAULT_TEST_PROJECT;
const testPath = expect.getState().testPath;
if (runId !== undefined && projectName !== undefined && testPath !== undefined) {
    const file = relative(process.cwd(), testPath);
    let locks: readonly LaneLock[] = [];
    const trace = (event: LaneEvent): void => traceLanes(event, file, locks);
    const release = (): void => {
        process.off("exit", release); // the worker outlives this file
        trace("release");
        locks.forEach((lock) => lock.release());
    };
    process.once("exit", release);
    afterAll(release);
    trace("wait");
    locks = await takeTestLanes(runId, needsWholeMachine(projectName, file));
    trace("take");
    const [onlyLane, ...otherLanes] = locks;
    if (onlyLane !== undefined && otherLanes.length === 0 && inject("pinTestLanes")) {
        pinToLaneCores(onlyLane.lane, inject("laneCoreCount"));
    } else {
        // The heavy projects reuse their workers (isolate: false): the file before may have pinned this one to its lane.
        pinToAllCores(inject("laneCoreCount"));
    }
}
