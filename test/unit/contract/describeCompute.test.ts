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

    it("says where the layers left off the device went when fewer were asked for (--gpu-layers N), never in silence", () => {
        const asked: EngineCompute = {
            backend: "vulkan",
            binary: "patched prebuilt",
            devices: [{ name: "llvmpipe (LLVM 15.0.6, 256 bits)", type: "cpu" }],
            layers: { numOnDevice: 2, numTotal: 3, numPlanned: 2 }
        };
        expect(describeCompute(asked, 2)).toBe(
            "vulkan, patched prebuilt, llvmpipe (LLVM 15.0.6, 256 bits) (cpu device), 2 of 3 layers on the device as planned, the other 1 on the CPU"
        );
    });

    it("says when the engine runs the unpatched prebuilt that it is the slower path and why; a patched build says nothing more", () => {
        const vulkan: EngineCompute = {
            backend: "vulkan",
            binary: "prebuilt",
            devices: [{ name: "NVIDIA T4", type: "gpu" }],
            layers: { numOnDevice: 33, numTotal: 33, numPlanned: 33 },
            slowerPath: "slower path: node-llama-cpp's prebuilt without Kvault's patch; no Kvault build for vulkan here"
        };
        expect(describeCompute(vulkan, 8)).toBe(
            "vulkan, prebuilt, NVIDIA T4 (gpu device), 33 of 33 layers on the device " +
                "(slower path: node-llama-cpp's prebuilt without Kvault's patch; no Kvault build for vulkan here)"
        );
        const { slowerPath: _, ...patched } = vulkan;
        expect(describeCompute({ ...patched, binary: "patched prebuilt" }, 8)).toBe(
            "vulkan, patched prebuilt, NVIDIA T4 (gpu device), 33 of 33 layers on the device"
        );
    });
});
