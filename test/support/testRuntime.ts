// The runtime a model-tier test runs on: the CPU in the model project, the Vulkan device in the gpu
// project, which runs some of the same files again (vitest.config.ts sets KVAULT_TEST_GPU there).
import { expect } from "vitest";
import type { KvEngine } from "../../engine/KvEngine.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";

/** The environment variable the gpu project sets to the backend its files must run on. */
export const TEST_GPU_VARIABLE = "KVAULT_TEST_GPU";

/** The backend this project's tests run on: "vulkan" in the gpu project, the CPU (false) elsewhere. */
export function testGpu(): "vulkan" | false {
    const named = process.env[TEST_GPU_VARIABLE];
    if (named === undefined || named === "") {
        return false;
    }
    if (named !== "vulkan") {
        throw new Error(`${TEST_GPU_VARIABLE} is "${named}"; the gpu test project runs on "vulkan" (or leave it unset for the CPU).`);
    }
    return named;
}

/**
 * Starts the runtime for this project's backend. On a GPU it logs the backend and device names (a
 * run's log says what it ran on) and asserts that the backend is the one named, so a machine that
 * fell back to the CPU fails instead of passing on the wrong path.
 */
export async function startTestRuntime(options: { readonly maxThreads?: number } = {}): Promise<LlamaRuntime> {
    const gpu = testGpu();
    const runtime = await LlamaRuntime.start({ gpu, ...options });
    if (gpu !== false) {
        console.log(`backend ${runtime.backend}, device ${runtime.devices.map((device) => device.name).join(", ")}`);
        expect(runtime.backend).toBe(gpu);
        expect(runtime.devices.length).toBeGreaterThan(0);
    }
    return runtime;
}

/** On a GPU, every layer of the engine's model is on the device (nothing left on the CPU to hide a device bug). */
export function expectEveryLayerOnDevice(engine: KvEngine): void {
    if (testGpu() !== false) {
        expect(engine.model.gpuLayers).toBe(engine.model.fileInsights.totalLayers);
    }
}
