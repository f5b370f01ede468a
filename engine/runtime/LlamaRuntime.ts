import os from "node:os";
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel } from "node-llama-cpp";
import { KvaultError } from "../core/KvaultError.js";
import { findLocalBuilds, localBuildCmakeOptions, type LocalBuildFlavor } from "./localLlamaBuild.js";

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
    /**
     * Whether to look for a binary of `npm run build-llama` first (localLlamaBuild.ts). On by default;
     * without one, or when it cannot load, node-llama-cpp's prebuilt binary is used, as always.
     */
    readonly preferLocalBuild?: boolean;
}

/** Where the loaded binary came from: compiled here (which flavour) or node-llama-cpp's prebuilt. */
export type BinarySource = { readonly kind: "prebuilt" } | { readonly kind: "localBuild"; readonly flavor: LocalBuildFlavor };

/** One loaded llama.cpp binding. The only place, with the rest of engine/runtime/, that sees node-llama-cpp. */
export class LlamaRuntime {
    private disposed = false;

    private constructor(
        readonly llama: Llama,
        readonly backend: ComputeBackend,
        readonly gpuDeviceNames: readonly string[],
        readonly binary: BinarySource
    ) {}

    static async start({
        gpu = "auto",
        maxThreads = os.availableParallelism(),
        preferLocalBuild = true
    }: LlamaRuntimeOptions = {}): Promise<LlamaRuntime> {
        // node-llama-cpp finds a local build only by its cmake options, and for each GPU type in turn it
        // tries that local build and then the prebuilt, so a prebuilt CUDA binary still wins over a
        // CPU-only local build. With no local build of ours there, this is the plain prebuilt lookup.
        const local = preferLocalBuild ? findLocalBuilds()[0] : undefined;
        const llama = await getLlama({
            gpu,
            maxThreads,
            build: "never", // never compile or download here: a local build is made by `npm run build-llama`
            ...(local === undefined ? {} : { cmakeOptions: { ...localBuildCmakeOptions[local.flavor] } }),
            logLevel: LlamaLogLevel.error,
            progressLogs: false
        });
        const backend: ComputeBackend = llama.gpu === false ? "cpu" : llama.gpu;
        const gpuDeviceNames = backend === "cpu" ? [] : await llama.getGpuDeviceNames();
        const binary: BinarySource =
            llama.buildType === "localBuild" && local !== undefined ? { kind: "localBuild", flavor: local.flavor } : { kind: "prebuilt" };
        return new LlamaRuntime(llama, backend, gpuDeviceNames, binary);
    }

    /**
     * A one-line description for logs and the UI, e.g. "cpu, local build, 2 threads",
     * "cpu, prebuilt, 2 threads" or "cuda, prebuilt (NVIDIA H200)".
     */
    describe(): string {
        const binary = this.binary.kind === "prebuilt" ? "prebuilt" : this.binary.flavor === "native" ? "local build" : "portable build";
        return this.backend === "cpu"
            ? `cpu, ${binary}, ${this.llama.maxThreads} threads`
            : `${this.backend}, ${binary} (${this.gpuDeviceNames.join(", ") || "unknown device"})`;
    }

    /**
     * Loads a model with `gpuLayers` of its layers on the GPU (node-llama-cpp's "auto" when
     * absent). node-llama-cpp would clamp a number above the model's layers (block count plus the
     * output layer) in silence, so that is refused here, naming both numbers; on the CPU it keeps
     * every layer there, and so does this.
     */
    async loadModel(modelPath: string, gpuLayers?: number): Promise<LlamaModel> {
        const model = await this.llama.loadModel({ modelPath, ...(gpuLayers === undefined ? {} : { gpuLayers }) });
        const totalLayers = model.fileInsights.totalLayers;
        if (gpuLayers !== undefined && gpuLayers > totalLayers) {
            await model.dispose();
            throw new GpuLayersAboveModelError(
                `gpuLayers is ${gpuLayers}, but this model has ${totalLayers - 1} layers and an output layer (${totalLayers} in all); ` +
                    `give 0 to ${totalLayers}, or leave it out for node-llama-cpp's choice.`
            );
        }
        return model;
    }

    async dispose(): Promise<void> {
        if (this.disposed) {
            return;
        }
        this.disposed = true;
        await this.llama.dispose();
    }
}

/** More GPU layers were asked for than the model has. */
export class GpuLayersAboveModelError extends KvaultError {
    readonly code = "gpu_layers_above_model";
}
