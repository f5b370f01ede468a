import { relative } from "node:path";
import { afterAll, expect, inject } from "vitest";
import { LaneLock } from "./LaneLock.js";
import { pinToLaneCores } from "./pinToLaneCores.js";
import { lanesOf } from "./testLanes.js";

// A setup file of the heavy projects: the file waits here, before its own imports, until its lanes
// are free (taken in one order, so two files never wait on each other), runs on its lane's cores when
// it holds one lane and the run has work for both, and frees them after its last afterAll (setup-file
// hooks run last) or on exit.
const runId = process.env.KVAULT_TEST_RUN_ID;
const projectName = process.env.KVAULT_TEST_PROJECT;
const testPath = expect.getState().testPath;
if (runId !== undefined && projectName !== undefined && testPath !== undefined) {
    const lanes = lanesOf(projectName, relative(process.cwd(), testPath));
    const locks = lanes.map((lane) => new LaneLock(lane, runId));
    const release = (): void => locks.forEach((lock) => lock.release());
    process.once("exit", release);
    afterAll(release);
    for (const lock of locks) {
        await lock.acquire();
    }
    const [onlyLane, ...otherLanes] = lanes;
    if (onlyLane !== undefined && otherLanes.length === 0 && inject("pinTestLanes")) {
        pinToLaneCores(onlyLane);
    }
}
