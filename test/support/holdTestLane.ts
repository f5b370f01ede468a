import { relative } from "node:path";
import { afterAll, expect, inject } from "vitest";
import type { LaneLock } from "./LaneLock.js";
import { pinToLaneCores } from "./pinToLaneCores.js";
import { takeTestLanes } from "./takeTestLanes.js";
import { needsWholeMachine } from "./testLanes.js";

// A setup file of the heavy projects: the file waits here, before its own imports, until it holds a
// free lane (or both, if it needs the whole machine), runs on that lane's cores when it holds one and
// the run has work for both, and frees its lanes after its last afterAll (setup-file hooks run last)
// or on exit.
const runId = process.env.KVAULT_TEST_RUN_ID;
const projectName = process.env.KVAULT_TEST_PROJECT;
const testPath = expect.getState().testPath;
if (runId !== undefined && projectName !== undefined && testPath !== undefined) {
    let locks: readonly LaneLock[] = [];
    const release = (): void => locks.forEach((lock) => lock.release());
    process.once("exit", release);
    afterAll(release);
    locks = await takeTestLanes(runId, needsWholeMachine(projectName, relative(process.cwd(), testPath)));
    const [onlyLane, ...otherLanes] = locks;
    if (onlyLane !== undefined && otherLanes.length === 0 && inject("pinTestLanes")) {
        pinToLaneCores(onlyLane.lane);
    }
}
