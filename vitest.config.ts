import { defineConfig } from "vitest/config";
import { vulkanTestEnvironment } from "./test/gpu/vulkanEnvironment.js";

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

// test/unit is pure and fast; test/cli runs the project's commands as a user would; test/model loads generated GGUF files with real node-llama-cpp
// and runs one file at a time, because native contexts compete for the same cores. test/e2e drives Debian's Chromium against the
// headless server (one server and one browser per file, one file at a time), after globalSetup builds the renderer. test/gpu runs
// the engine on a Vulkan device (lavapipe in CI), every layer offloaded; its globalSetup finds the driver or fails the run.
export default defineConfig({
    test: {
        projects: [
            {
                test: {
                    name: "unit",
                    include: ["test/unit/**/*.test.ts"],
                    environment: "node"
                }
            },
            {
                test: {
                    name: "cli",
                    include: ["test/cli/**/*.test.ts"],
                    environment: "node",
                    testTimeout: 60_000
                }
            },
            {
                test: {
                    name: "model",
                    include: ["test/model/**/*.test.ts"],
                    environment: "node",
                    globalSetup: ["test/model/globalSetup.ts"],
                    fileParallelism: false,
                    testTimeout: 120_000,
                    hookTimeout: 300_000
                }
            },
            {
                test: {
                    name: "gpu",
                    include: ["test/gpu/**/*.test.ts", ...modelTestsOnDevice],
                    environment: "node",
                    env: { KVAULT_TEST_GPU: "vulkan", ...vulkanTestEnvironment() },
                    globalSetup: ["test/gpu/globalSetup.ts"],
                    fileParallelism: false,
                    testTimeout: 240_000,
                    hookTimeout: 240_000
                }
            },
            {
                test: {
                    name: "e2e",
                    include: ["test/e2e/**/*.test.ts"],
                    environment: "node",
                    globalSetup: ["test/e2e/globalSetup.ts"],
                    fileParallelism: false,
                    testTimeout: 240_000,
                    hookTimeout: 180_000
                }
            }
        ]
    }
});
