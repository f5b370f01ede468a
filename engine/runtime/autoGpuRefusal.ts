import type { ComputeDevice, GpuBackendName } from "../../contract/engineCompute.js";

/**
 * Software rasterizers that GPU APIs expose as devices: Mesa's llvmpipe (lavapipe's device name)
 * and Google's SwiftShader. node-llama-cpp reports device names alone, so the name tells the kind.
 */
const SOFTWARE_DEVICE = /\b(llvmpipe|lavapipe|swiftshader)\b/i;

/** A device as the engine reports it: a software rasterizer is a "cpu" device, anything else a "gpu". */
export function computeDeviceOf(name: string): ComputeDevice {
    return { name, type: SOFTWARE_DEVICE.test(name) ? "cpu" : "gpu" };
}

/**
 * Why gpu "auto" must not keep the GPU binary node-llama-cpp chose, or undefined when it has a
 * hardware device to use. A binary whose API found no device (ggml's Vulkan backend skips software
 * devices unless GGML_VK_VISIBLE_DEVICES names them) or only software ones would compute on the
 * CPU anyway, without Kvault's own build: the engine takes the CPU path instead, saying this.
 */
export function autoGpuRefusal(
    backend: GpuBackendName,
    devices: readonly ComputeDevice[],
    vram: { readonly totalBytes: number }
): string | undefined {
    if (devices.length === 0 || vram.totalBytes === 0) {
        const found = devices.length === 0 ? "no device" : `${devices.map((device) => device.name).join(", ")} with no memory`;
        return `node-llama-cpp's ${backend} binary found ${found}, so the engine runs on the CPU`;
    }
    if (devices.every((device) => device.type === "cpu")) {
        const names = devices.map((device) => device.name).join(", ");
        return `the only ${backend} device is ${names}, a software (CPU) device, so the engine runs on the CPU; --gpu ${backend} uses it`;
    }
    return undefined;
}
