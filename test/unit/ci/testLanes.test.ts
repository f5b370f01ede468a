import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestSpecification, Vitest } from "vitest/node";
import { afterEach, describe, expect, it } from "vitest";
import { LaneLock } from "../../support/LaneLock.js";
import { LaneSequencer } from "../../support/LaneSequencer.js";
import { laneCores } from "../../support/pinToLaneCores.js";

// The heavy projects run in two lanes of one file at a time (vitest.config.ts): each lane has its
// own cores, a lane is one holder's at a time (and a dead holder's is taken over), and the order of
// the run keeps both lanes busy with the slowest files first.
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
        fs.rmSync(path.join(os.tmpdir(), `kvault-test-lanes-${runId}`), { recursive: true, force: true });
    }
});

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

describe("test lanes", () => {
    it("gives each of the two lanes its own half of the cores, and none on a 1-core machine", () => {
        expect(laneCores("model", 2)).toEqual({ start: 0, end: 1 });
        expect(laneCores("app", 2)).toEqual({ start: 1, end: 2 });
        expect(laneCores("model", 16)).toEqual({ start: 0, end: 8 });
        expect(laneCores("app", 16)).toEqual({ start: 8, end: 16 });
        expect(laneCores("app", 1)).toBeUndefined();
    });

    it("lets a second holder in only once the first has released the lane", async () => {
        const runId = newRunId();
        const first = new LaneLock("model", runId);
        const second = new LaneLock("model", runId);
        await first.acquire();
        let secondHolds = false;
        const waiting = second.acquire().then(() => {
            secondHolds = true;
        });
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(secondHolds).toBe(false);
        first.release();
        await waiting;
        expect(secondHolds).toBe(true);
        second.release();
        await new LaneLock("app", runId).acquire(); // the other lane was free all along
    });

    it("takes over a lane whose holder died without releasing it", async () => {
        const runId = newRunId();
        const exited = spawnSync(process.execPath, ["-e", "0"]);
        const laneDirectory = path.join(os.tmpdir(), `kvault-test-lanes-${runId}`, "model");
        fs.mkdirSync(laneDirectory, { recursive: true });
        fs.writeFileSync(path.join(laneDirectory, "owner"), String(exited.pid));
        const lock = new LaneLock("model", runId);
        await lock.acquire();
        expect(fs.readFileSync(path.join(laneDirectory, "owner"), "utf8")).toBe(String(process.pid));
        lock.release();
        expect(fs.existsSync(laneDirectory)).toBe(false);
    });

    it("orders a group without lanes slowest first, then the heavy group as its lanes free, whole-machine files last", async () => {
        const files = [
            spec("unit", "test/unit/a.test.ts", 0),
            spec("cli", "test/cli/makeModelCli.test.ts", 0),
            spec("model", "test/model/families/phi3.test.ts", 1),
            spec("model", "test/model/runtime/gatherDecodes.test.ts", 1),
            spec("e2e", "test/e2e/settings.test.ts", 1),
            spec("model", "test/model/families/gemma3.test.ts", 1),
            spec("e2e", "test/e2e/login.test.ts", 1),
            spec("model", "test/model/host/models/modelsOnDisk.test.ts", 1)
        ];
        const sorted = await sequencer().sort(files);
        expect(sorted.map((file) => path.relative(root, file.moduleId))).toEqual([
            "test/cli/makeModelCli.test.ts",
            "test/unit/a.test.ts",
            // the app lane frees after modelsOnDisk before the model lane after gemma3, so settings starts before phi3
            "test/model/families/gemma3.test.ts",
            "test/model/host/models/modelsOnDisk.test.ts",
            "test/e2e/settings.test.ts",
            "test/model/families/phi3.test.ts",
            "test/e2e/login.test.ts",
            "test/model/runtime/gatherDecodes.test.ts"
        ]);
        expect(provided.get("model.pinTestLanes")).toBe(true);
        expect(provided.get("e2e.pinTestLanes")).toBe(true);
    });

    it("keeps every core for a run whose files are all of one lane", async () => {
        await sequencer().sort([
            spec("model", "test/model/families/phi3.test.ts", 1),
            spec("model", "test/model/families/gemma3.test.ts", 1),
            spec("model", "test/model/runtime/gatherDecodes.test.ts", 1)
        ]);
        expect(provided.get("model.pinTestLanes")).toBe(false);
    });
});
