import { describe, expect, it } from "vitest";
import { describeCompute, type EngineCompute } from "../../../contract/engineCompute.js";

const MiB = 1024 ** 2;

describe("describeCompute: the backend line", () => {
    it("names the CPU's binary and threads, and why auto left a GPU binary", () => {
        const cpu: EngineCompute = {
            backend: "cpu",
            binary: "local build",
            devices: [],
            layers: { numOnDevice: 0, numTotal: 3, numPlanned: 0 }
        };
        expect(describeCompute(cpu, 2)).toBe("cpu, local build, 2 threads");
        expect(
            describeCompute({ ...cpu, fallback: "node-llama-cpp's vulkan binary found no device, so the engine runs on the CPU" }, 2)
        ).toBe("cpu, local build, 2 threads (auto: node-llama-cpp's vulkan binary found no device, so the engine runs on the CPU)");
    });

    it("names a GPU's devices with their type, the layers placed and the device memory", () => {
        const vulkan: EngineCompute = {
            backend: "vulkan",
            binary: "prebuilt",
            devices: [{ name: "llvmpipe (LLVM 15.0.6, 256 bits)", type: "cpu" }],
            layers: { numOnDevice: 3, numTotal: 3, numPlanned: 3 },
            deviceMemory: { usedBytes: 40 * MiB, totalBytes: 2048 * MiB }
        };
        expect(describeCompute(vulkan, 2)).toBe(
            "vulkan, prebuilt, llvmpipe (LLVM 15.0.6, 256 bits) (cpu device), 3 of 3 layers on the device, 40 MiB of 2,048 MiB device memory"
        );
    });

    it("says how many layers node-llama-cpp placed when fewer than planned, and where the rest went", () => {
        const short: EngineCompute = {
            backend: "cuda",
            binary: "prebuilt",
            devices: [{ name: "NVIDIA T4", type: "gpu" }],
            layers: { numOnDevice: 20, numTotal: 33, numPlanned: 33 }
        };
        expect(describeCompute(short, 8)).toBe(
            "cuda, prebuilt, NVIDIA T4 (gpu device), 20 of 33 layers on the device, not the 33 planned: the other 13 on the CPU"
        );
    });
});
