import { defineConfig } from "vitest/config";
import { vulkanTestEnvironment } from "./test/gpu/vulkanEnvironment.js";
import { LaneSequencer } from "./test/support/LaneSequencer.js";

/**
 * Model-tier files the gpu project runs again on the Vulkan device: each starts its runtime through
 * test/support/testRuntime.ts, which reads KVAULT_TEST_GPU; the small ones that cover what a device
 * could get wrong (the handoff's checks against every tampering, aborts at each stage, the meters).
 */
const modelTestsOnDevice = [
    "test/model/engine/handoffIntegrity.test.ts",
    "test/model/engine/cancellation.test.ts",
    "test/model/service/resourceUse.test.ts"
];

/** Workers of each group: the CI machine has 2 cores, and vitest's default there is 1 (cores - 1). */
const WORKERS_PER_GROUP = 2;

/** unit runs first, 2 files at a time; then the projects that run processes, in two lanes (test/support/testLanes.ts). */
const UNIT_GROUP = 0;
const LANES_GROUP = 1;

/** Removes the run's lane folder when the run ends (test/support/removeLaneRunDirectory.ts). */
const LANE_TEARDOWN = "test/support/removeLaneRunDirectory.ts";

/** What a heavy project's workers need to take their file's lane (test/support/holdTestLane.ts). */
function laneEnvironment(projectName: string): Record<string, string> {
    return { KVAULT_TEST_RUN_ID: String(process.pid), KVAULT_TEST_PROJECT: projectName };
}

// test/unit is pure and fast: 2 files at a time. test/cli runs the project's commands as a user would; test/model loads
// generated GGUF files with real node-llama-cpp; test/e2e drives Debian's Chromium against the headless server (one server
// and one browser per file), after globalSetup builds the renderer; test/gpu runs the engine on a Vulkan device (lavapipe
// in CI), every layer offloaded; its globalSetup finds the driver or fails the run. These four share one group split into
// two lanes of one file at a time, each on its half of the cores, so one file's native threads and processes never compete
// with another's; a file takes whichever lane is free (test/support/testLanes.ts).
// No project isolates its files (isolate: false): a worker runs one file after another in one process, so vitest,
// node-llama-cpp and the code under test are loaded once per worker, not once per file (docs/TESTING.md has the run it
// saved). A file that replaces a module (vi.mock) or fakes timers undoes it before the next file; each heavy file still
// takes its lane and its cores afresh (test/support/holdTestLane.ts) and stops what it started.
export default defineConfig({
    test: {
        sequence: { sequencer: LaneSequencer },
        projects: [
            {
                test: {
                    name: "unit",
                    isolate: false,
                    include: ["test/unit/**/*.test.ts"],
                    environment: "node",
                    sequence: { groupOrder: UNIT_GROUP },
                    maxWorkers: WORKERS_PER_GROUP
                }
            },
            {
                test: {
                    name: "cli",
                    isolate: false,
                    include: ["test/cli/**/*.test.ts"],
                    environment: "node",
                    env: laneEnvironment("cli"),
                    globalSetup: [LANE_TEARDOWN],
                    setupFiles: ["test/support/holdTestLane.ts"],
                    sequence: { groupOrder: LANES_GROUP },
                    maxWorkers: WORKERS_PER_GROUP,
                    testTimeout: 60_000
                }
            },
            {
                test: {
                    name: "model",
                    isolate: false,
                    include: ["test/model/**/*.test.ts"],
                    environment: "node",
                    env: laneEnvironment("model"),
                    globalSetup: ["test/model/globalSetup.ts", LANE_TEARDOWN],
                    setupFiles: ["test/support/holdTestLane.ts"],
                    sequence: { groupOrder: LANES_GROUP },
                    maxWorkers: WORKERS_PER_GROUP,
                    testTimeout: 120_000,
                    hookTimeout: 300_000
                }
            },
            {
                test: {
                    name: "gpu",
                    isolate: false,
                    include: ["test/gpu/**/*.test.ts", ...modelTestsOnDevice],
                    environment: "node",
                    env: { KVAULT_TEST_GPU: "vulkan", ...vulkanTestEnvironment(), ...laneEnvironment("gpu") },
                    globalSetup: ["test/gpu/globalSetup.ts", LANE_TEARDOWN],
                    setupFiles: ["test/support/holdTestLane.ts"],
                    sequence: { groupOrder: LANES_GROUP },
                    maxWorkers: WORKERS_PER_GROUP,
                    testTimeout: 240_000,
                    hookTimeout: 240_000
                }
            },
            {
                test: {
                    name: "e2e",
                    isolate: false,
                    include: ["test/e2e/**/*.test.ts"],
                    environment: "node",
                    env: laneEnvironment("e2e"),
                    globalSetup: ["test/e2e/globalSetup.ts", LANE_TEARDOWN],
                    setupFiles: ["test/support/holdTestLane.ts"],
                    sequence: { groupOrder: LANES_GROUP },
                    maxWorkers: WORKERS_PER_GROUP,
                    testTimeout: 240_000,
                    hookTimeout: 180_000
                }
            }
        ]
    }
});
