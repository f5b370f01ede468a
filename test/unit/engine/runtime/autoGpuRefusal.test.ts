import { describe, expect, it } from "vitest";
import { autoGpuRefusal, computeDeviceOf } from "../../../../engine/runtime/autoGpuRefusal.js";

const GiB = 1024 ** 3;
/** The device name ggml's Vulkan backend gives Mesa's lavapipe (GGML_VK_VISIBLE_DEVICES=0). */
const LLVMPIPE = "llvmpipe (LLVM 15.0.6, 256 bits)";

describe("computeDeviceOf", () => {
    it("calls software rasterizers cpu devices and anything else a gpu", () => {
        expect(computeDeviceOf(LLVMPIPE)).toEqual({ name: LLVMPIPE, type: "cpu" });
        expect(computeDeviceOf("Lavapipe")).toEqual({ name: "Lavapipe", type: "cpu" });
        expect(computeDeviceOf("SwiftShader Device (Subzero)")).toEqual({ name: "SwiftShader Device (Subzero)", type: "cpu" });
        expect(computeDeviceOf("NVIDIA H200")).toEqual({ name: "NVIDIA H200", type: "gpu" });
        expect(computeDeviceOf("AMD Radeon Graphics (RADV GFX1103_R1)")).toEqual({
            name: "AMD Radeon Graphics (RADV GFX1103_R1)",
            type: "gpu"
        });
    });
});

describe("autoGpuRefusal: whether gpu auto keeps the GPU binary node-llama-cpp chose", () => {
    it("keeps one with a hardware device", () => {
        expect(autoGpuRefusal("cuda", [computeDeviceOf("NVIDIA H200")], { totalBytes: 141 * GiB })).toBeUndefined();
        // a hardware device beside a software one: the hardware one is used
        expect(
            autoGpuRefusal("vulkan", [computeDeviceOf("AMD Radeon RX 7900"), computeDeviceOf(LLVMPIPE)], { totalBytes: 24 * GiB })
        ).toBeUndefined();
    });

    it("leaves one that found no device (Mesa merely installed: ggml skips llvmpipe), saying so", () => {
        expect(autoGpuRefusal("vulkan", [], { totalBytes: 0 })).toBe(
            "node-llama-cpp's vulkan binary found no device, so the engine runs on the CPU"
        );
        expect(autoGpuRefusal("vulkan", [computeDeviceOf("Some GPU")], { totalBytes: 0 })).toBe(
            "node-llama-cpp's vulkan binary found Some GPU with no memory, so the engine runs on the CPU"
        );
    });

    it("leaves one whose only devices are software ones, and says how to use them", () => {
        expect(autoGpuRefusal("vulkan", [computeDeviceOf(LLVMPIPE)], { totalBytes: 2 * GiB })).toBe(
            `the only vulkan device is ${LLVMPIPE}, a software (CPU) device, so the engine runs on the CPU; --gpu vulkan uses it`
        );
    });
});
