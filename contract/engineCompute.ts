// What the engine computes on, as it reports it everywhere a user or a tool looks (the status
// bar, /health, /v1/models' kvault block, /metrics, Ollama's /api/ps): measured in the engine
// process when it came up (engine/runtime/LlamaRuntime.ts), never guessed by a host.

/** The compute backends a user may name (--gpu, engine.gpu); "auto" and "off" are the others. */
export const gpuBackendNames = ["cuda", "vulkan", "metal"] as const;
export type GpuBackendName = (typeof gpuBackendNames)[number];

/** The backend the engine's llama.cpp binary computes with. */
export type ComputeBackend = GpuBackendName | "cpu";

/**
 * Where the loaded binary came from: Kvault's own build (`npm run build-llama`: native, portable, or
 * "patched prebuilt", the patched addon on the prebuilt's own libraries, `--gpu X`) or node-llama-cpp's
 * prebuilt, the one without Kvault's patch.
 */
export type ComputeBinary = "local build" | "portable build" | "patched prebuilt" | "prebuilt";

/**
 * A device's kind: "gpu" a hardware one (discrete or integrated), "cpu" a software rasterizer a GPU
 * API exposes (Mesa's llvmpipe/lavapipe, SwiftShader: Vulkan's PHYSICAL_DEVICE_TYPE_CPU).
 */
export type ComputeDeviceType = "gpu" | "cpu";

export interface ComputeDevice {
    readonly name: string;
    readonly type: ComputeDeviceType;
}

export interface EngineCompute {
    readonly backend: ComputeBackend;
    readonly binary: ComputeBinary;
    /** The GPU backend's devices; none on the CPU. */
    readonly devices: readonly ComputeDevice[];
    /** The model's layers (its blocks and the output layer) node-llama-cpp placed on the device, of all of them; the rest are on the CPU. */
    readonly layers: { readonly numOnDevice: number; readonly numTotal: number; readonly numPlanned: number };
    /** The devices' memory when the engine came up, bytes (node-llama-cpp's getVramState); absent on the CPU. */
    readonly deviceMemory?: { readonly usedBytes: number; readonly totalBytes: number };
    /** Why "auto" left a GPU binary for the CPU (a software device only, or none at all); absent when it did not. */
    readonly fallback?: string;
    /**
     * Set when the engine runs node-llama-cpp's unpatched prebuilt: that it is the slower path
     * (sequence states through files, decode on libuv's pool) and why no Kvault build runs instead.
     */
    readonly slowerPath?: string;
}

/**
 * The backend line the status bar, the logs and `backend` in the API show, e.g. "cpu, local build,
 * 2 threads" or "vulkan, prebuilt, llvmpipe (cpu device), 3 of 3 layers on the device, 12 MiB of 2 GiB".
 */
export function describeCompute(compute: EngineCompute, numThreads: number): string {
    const slower = compute.slowerPath === undefined ? "" : ` (${compute.slowerPath})`;
    if (compute.backend === "cpu") {
        return `cpu, ${compute.binary}, ${numThreads} threads${compute.fallback === undefined ? "" : ` (auto: ${compute.fallback})`}${slower}`;
    }
    const devices = compute.devices.map((device) => `${device.name} (${device.type} device)`).join(", ") || "no device";
    const { numOnDevice, numTotal, numPlanned } = compute.layers;
    // before a model is loaded there are no layers to place
    const placed =
        numTotal === 0
            ? ""
            : numOnDevice < numPlanned
              ? `${numOnDevice} of ${numTotal} layers on the device, not the ${numPlanned} planned: the other ${numTotal - numOnDevice} on the CPU`
              : numOnDevice < numTotal
                ? `${numOnDevice} of ${numTotal} layers on the device as planned, the other ${numTotal - numOnDevice} on the CPU`
                : `${numOnDevice} of ${numTotal} layers on the device`;
    const memory =
        compute.deviceMemory === undefined
            ? ""
            : `, ${mebibytes(compute.deviceMemory.usedBytes)} of ${mebibytes(compute.deviceMemory.totalBytes)} device memory`;
    return `${compute.backend}, ${compute.binary}, ${devices}${placed === "" ? "" : `, ${placed}`}${memory}${slower}`;
}

function mebibytes(numBytes: number): string {
    return `${(numBytes / 2 ** 20).toLocaleString("en-US", { maximumFractionDigits: 0 })} MiB`;
}
