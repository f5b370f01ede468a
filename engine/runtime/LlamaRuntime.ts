import os from "node:os";
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel } from "node-llama-cpp";
import {
    describeCompute,
    type ComputeBackend,
    type ComputeBinary,
    type ComputeDevice,
    type EngineCompute,
    type GpuBackendName
} from "../../contract/engineCompute.js";
import { KvaultError } from "../core/KvaultError.js";
import { autoGpuRefusal, computeDeviceOf } from "./autoGpuRefusal.js";
import { findLocalBuilds, localBuildCmakeOptions, type LocalBuildFlavor, type LocalBuildInfo } from "./localLlamaBuild.js";

export type { ComputeBackend } from "../../contract/engineCompute.js";

/** Which backend to start: "auto" a GPU with a hardware device, else the CPU; a named one or none; false the CPU alone. */
export type GpuChoice = "auto" | GpuBackendName | false;

export interface LlamaRuntimeOptions {
    /**
     * "auto" takes the GPU binary node-llama-cpp finds (CUDA, Vulkan, Metal in its order) only when
     * it has a hardware device, else the CPU path with Kvault's own build (autoGpuRefusal.ts); a
     * named backend is used whatever its devices (a software one included), or refused with
     * GpuBackendUnavailableError; false is the CPU alone.
     */
    readonly gpu?: GpuChoice;
    /**
     * CPU threads for every context. node-llama-cpp defaults to at least 4, which on a 2-core
     * machine oversubscribes and slows decode many times over (docs/ARCHITECTURE.md, Threads;
     * figures in docs/measurements.md),
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
        readonly devices: readonly ComputeDevice[],
        readonly binary: BinarySource,
        /** Why "auto" left a GPU binary for the CPU; absent when it did not. */
        readonly fallback?: string,
        /** Why the unpatched prebuilt runs (EngineCompute.slowerPath); absent when a Kvault build does. */
        readonly slowerPath?: string
    ) {}

    static async start({
        gpu = "auto",
        maxThreads = os.availableParallelism(),
        preferLocalBuild = true
    }: LlamaRuntimeOptions = {}): Promise<LlamaRuntime> {
        const builds = preferLocalBuild ? findLocalBuilds() : undefined;
        if (gpu === false) {
            return LlamaRuntime.open(false, builds, maxThreads);
        }
        if (gpu === "auto") {
            const chosen = await LlamaRuntime.open("auto", builds, maxThreads);
            if (chosen.backend === "cpu") {
                // offered a GPU build's options, node-llama-cpp found no CPU build under them: offer the CPU's own
                if (chosen.binary.kind === "prebuilt" && builds?.some((build) => build.gpu === false) === true) {
                    await chosen.dispose();
                    return LlamaRuntime.open(false, builds, maxThreads);
                }
                return chosen;
            }
            const refusal = autoGpuRefusal(chosen.backend, chosen.devices, await chosen.vram());
            if (refusal === undefined) {
                return chosen;
            }
            await chosen.dispose();
            return LlamaRuntime.open(false, builds, maxThreads, refusal);
        }
        let named: LlamaRuntime;
        try {
            named = await LlamaRuntime.open(gpu, builds, maxThreads);
        } catch (error) {
            throw new GpuBackendUnavailableError(
                `--gpu ${gpu}: node-llama-cpp could not load a ${gpu} binary (${(error as Error).message.split("\n")[0]}). ` +
                    `Install the ${gpu} driver and runtime, or give --gpu auto (a GPU when there is one, else the CPU) or --gpu off.`
            );
        }
        if (named.devices.length === 0) {
            await named.dispose();
            throw new GpuBackendUnavailableError(
                `--gpu ${gpu}: the ${gpu} binary loaded but found no device` +
                    (gpu === "vulkan"
                        ? " (ggml's Vulkan backend skips software devices such as llvmpipe unless GGML_VK_VISIBLE_DEVICES names them, e.g. GGML_VK_VISIBLE_DEVICES=0)"
                        : "") +
                    ". Give --gpu auto or --gpu off to run on the CPU."
            );
        }
        return named;
    }

    /**
     * One getLlama: node-llama-cpp finds a local build only by its cmake options, and for each GPU
     * type in turn it tries that local build and then the prebuilt, so a prebuilt GPU binary wins
     * over a CPU-only local build under "auto". The local build offered is one for this very backend
     * (the first flavour for "auto"). `build: "never"`: nothing is compiled or downloaded here.
     */
    private static async open(
        gpu: GpuChoice,
        /** Kvault's builds found; undefined when they are turned off (preferLocalBuild: false). */
        builds: readonly LocalBuildInfo[] | undefined,
        maxThreads: number,
        fallback?: string
    ): Promise<LlamaRuntime> {
        const local = builds === undefined ? undefined : localBuildFor(gpu, builds);
        const llama = await getLlama({
            gpu,
            maxThreads,
            build: "never",
            ...(local === undefined ? {} : { cmakeOptions: { ...localBuildCmakeOptions[local.flavor] } }),
            logLevel: LlamaLogLevel.error,
            progressLogs: false
        });
        const backend: ComputeBackend = llama.gpu === false ? "cpu" : llama.gpu;
        const devices = backend === "cpu" ? [] : (await llama.getGpuDeviceNames()).map(computeDeviceOf);
        const binary: BinarySource =
            llama.buildType === "localBuild" && local !== undefined ? { kind: "localBuild", flavor: local.flavor } : { kind: "prebuilt" };
        const slowerPath = binary.kind === "prebuilt" ? slowerPathOf(backend, local, builds) : undefined;
        return new LlamaRuntime(llama, backend, devices, binary, fallback, slowerPath);
    }

    /** The GPU devices' memory now, bytes (node-llama-cpp's getVramState); zeros on the CPU. */
    async vram(): Promise<{ usedBytes: number; totalBytes: number }> {
        if (this.backend === "cpu") {
            return { usedBytes: 0, totalBytes: 0 };
        }
        const { used, total } = await this.llama.getVramState();
        return { usedBytes: used, totalBytes: total };
    }

    get binaryName(): ComputeBinary {
        return this.binary.kind === "prebuilt" ? "prebuilt" : binaryNames[this.binary.flavor];
    }

    /**
     * What the engine computes on once `model` is loaded: backend, binary, devices, the layers
     * node-llama-cpp placed on the device against `numPlannedLayers` (all of them when absent:
     * "auto" asks for all that fit), and the device memory now.
     */
    async report(model: LlamaModel, numPlannedLayers?: number): Promise<EngineCompute> {
        const numTotal = model.fileInsights.totalLayers;
        const onDevice = this.backend !== "cpu";
        return {
            backend: this.backend,
            binary: this.binaryName,
            devices: this.devices,
            layers: { numOnDevice: onDevice ? model.gpuLayers : 0, numTotal, numPlanned: onDevice ? (numPlannedLayers ?? numTotal) : 0 },
            ...(onDevice ? { deviceMemory: await this.vram() } : {}),
            ...(this.fallback === undefined ? {} : { fallback: this.fallback }),
            ...(this.slowerPath === undefined ? {} : { slowerPath: this.slowerPath })
        };
    }

    /**
     * A one-line description before a model is loaded, for logs and benchmarks, e.g. "cpu, local
     * build, 2 threads" or "vulkan, prebuilt, llvmpipe (LLVM 15.0.6, 256 bits) (cpu device), …".
     */
    describe(): string {
        return describeCompute(
            {
                backend: this.backend,
                binary: this.binaryName,
                devices: this.devices,
                layers: { numOnDevice: 0, numTotal: 0, numPlanned: 0 },
                ...(this.fallback === undefined ? {} : { fallback: this.fallback }),
                ...(this.slowerPath === undefined ? {} : { slowerPath: this.slowerPath })
            },
            this.llama.maxThreads
        );
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

const binaryNames: Readonly<Record<LocalBuildFlavor, ComputeBinary>> = {
    native: "local build",
    portable: "portable build",
    "patched-prebuilt": "patched prebuilt"
};

/**
 * The local build offered to getLlama for `gpu` (it takes the cmake options of one): for a named
 * backend or the CPU, the first of that backend; for "auto", the first of a GPU backend when there is
 * one, since node-llama-cpp tries the GPU binaries before the CPU's (and "auto" falls back to the CPU
 * with a second getLlama that offers the CPU's build), else the CPU's.
 */
export function localBuildFor(gpu: GpuChoice, builds: readonly LocalBuildInfo[]): LocalBuildInfo | undefined {
    if (gpu === "auto") {
        return builds.find((build) => build.gpu !== false) ?? builds[0];
    }
    return builds.find((build) => build.gpu === gpu);
}

/**
 * Why node-llama-cpp's unpatched prebuilt runs on `backend`, said as the slower path it is: sequence
 * states go through files and decode runs on libuv's pool, without a thread pool per context.
 */
export function slowerPathOf(
    backend: ComputeBackend,
    offered: LocalBuildInfo | undefined,
    builds: readonly LocalBuildInfo[] | undefined
): string {
    const what = "slower path: node-llama-cpp's prebuilt without Kvault's patch, states through files, decode on libuv's pool";
    if (builds === undefined) {
        return `${what}; Kvault's builds are turned off for this engine (llamaBinary: prebuilt)`;
    }
    if (offered !== undefined && (offered.gpu === false ? "cpu" : offered.gpu) === backend) {
        return `${what}; Kvault's build in ${offered.folder} did not load (rebuild it with npm run build-llama -- --force)`;
    }
    const command = backend === "cpu" ? "npm run build-llama" : `npm run build-llama -- --gpu ${backend}`;
    return `${what}; no Kvault build for ${backend} here (${command} makes one)`;
}

/** A named GPU backend (--gpu cuda|vulkan|metal) has no binary that loads here, or no device. */
export class GpuBackendUnavailableError extends KvaultError {
    readonly code = "gpu_backend_unavailable";
}

/** More GPU layers were asked for than the model has. */
export class GpuLayersAboveModelError extends KvaultError {
    readonly code = "gpu_layers_above_model";
}
