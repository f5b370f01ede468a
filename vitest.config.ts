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

/** unit runs first, 2 files at a time; then cli, one file at a time; then the heavy projects, in two lanes (test/support/testLanes.ts). */
const UNIT_GROUP = 0;
const CLI_GROUP = 1;
const LANES_GROUP = 2;

/** Removes the run's lane folder when the run ends (test/support/removeLaneRunDirectory.ts). */
const LANE_TEARDOWN = "test/support/removeLaneRunDirectory.ts";

/** What a heavy project's workers need to take their file's lane (test/support/holdTestLane.ts). */
function laneEnvironment(projectName: string): Record<string, string> {
    return { KVAULT_TEST_RUN_ID: String(process.pid), KVAULT_TEST_PROJECT: projectName };
}

// test/unit is pure and fast: 2 files at a time. test/cli runs the project's commands as a user would, one file at a time:
// its heaviest files (make-model's generators, the store's kill -9 loops) passed their 60 s limits alone but not side by side.
// test/model loads generated GGUF files with real node-llama-cpp; test/e2e drives Debian's Chromium against the headless
// server (one server and one browser per file), after globalSetup builds the renderer; test/gpu runs the engine on a
// Vulkan device (lavapipe in CI), every layer offloaded; its globalSetup finds the driver or fails the run. These three
// share one group of 2 workers split into two lanes of one file at a time, each on its half of the cores, so one file's
// native threads never compete with another's; a file takes whichever lane is free (test/support/testLanes.ts).
export default defineConfig({
    test: {
        sequence: { sequencer: LaneSequencer },
        projects: [
            {
                test: {
                    name: "unit",
                    include: ["test/unit/**/*.test.ts"],
                    environment: "node",
                    sequence: { groupOrder: UNIT_GROUP },
                    maxWorkers: WORKERS_PER_GROUP
                }
            },
            {
                test: {
                    name: "cli",
                    include: ["test/cli/**/*.test.ts"],
                    environment: "node",
                    sequence: { groupOrder: CLI_GROUP },
                    maxWorkers: 1,
                    testTimeout: 60_000
                }
            },
            {
                test: {
                    name: "model",
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
