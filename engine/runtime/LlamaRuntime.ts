import os from "node:os";
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel } from "node-llama-cpp";

/** Which compute backend node-llama-cpp chose; "cpu" when no GPU binary could be used. */
export type ComputeBackend = "cuda" | "vulkan" | "metal" | "cpu";

export interface LlamaRuntimeOptions {
    /** "auto" tries CUDA, Vulkan and Metal in node-llama-cpp's order and falls back to the CPU. */
    readonly gpu?: "auto" | false;
    /**
     * CPU threads for every context. node-llama-cpp defaults to at least 4, which on a 2-core
     * machine oversubscribes and slows decode by ~60× (docs/ARCHITECTURE.md, Threads),
     * so the default is the number of cores this process may actually use.
     */
    readonly maxThreads?: number;
}

/** One loaded llama.cpp binding. The only place, with the rest of engine/runtime/, that sees node-llama-cpp. */
export class LlamaRuntime {
    private disposed = false;

    private constructor(
        readonly llama: Llama,
        readonly backend: ComputeBackend,
        readonly gpuDeviceNames: readonly string[]
    ) {}

    static async start({ gpu = "auto", maxThreads = os.availableParallelism() }: LlamaRuntimeOptions = {}): Promise<LlamaRuntime> {
        const llama = await getLlama({
            gpu,
            maxThreads,
            build: "never", // only the prebuilt binaries shipped as npm packages; never compile or download
            logLevel: LlamaLogLevel.error,
            progressLogs: false
        });
        const backend: ComputeBackend = llama.gpu === false ? "cpu" : llama.gpu;
        const gpuDeviceNames = backend === "cpu" ? [] : await llama.getGpuDeviceNames();
        return new LlamaRuntime(llama, backend, gpuDeviceNames);
    }

    /** A one-line description for logs and the UI, e.g. "cpu, 2 threads" or "cuda (NVIDIA H200)". */
    describe(): string {
        return this.backend === "cpu"
            ? `cpu, ${this.llama.maxThreads} threads`
            : `${this.backend} (${this.gpuDeviceNames.join(", ") || "unknown device"})`;
    }

    async loadModel(modelPath: string): Promise<LlamaModel> {
        return this.llama.loadModel({ modelPath });
    }

    async dispose(): Promise<void> {
        if (this.disposed) {
            return;
        }
        this.disposed = true;
        await this.llama.dispose();
    }
}
