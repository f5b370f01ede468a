// What `npm run bench -- gpu` will do on this machine, decided from what was found on it (pure, so
// that its decisions are unit-tested on machines without a GPU). The backend is CUDA when nvidia-smi
// lists a GPU, else Vulkan when a Vulkan device is visible, or the one `--backend` names. On CUDA it
// refuses without a CUDA binary for node-llama-cpp and skips the llama-server arm, saying why,
// without nvcc. On Vulkan it skips the llama-server arm (the bench builds none for Vulkan), and on a
// software device alone (lavapipe) it runs the smallest model and prompts: a smoke run, not speed.
import type { ComputeDevice } from "../../../contract/engineCompute.js";

export const gpuBenchBackends = ["cuda", "vulkan"] as const;
export type GpuBenchBackend = (typeof gpuBenchBackends)[number];

/** What the probe found (probeGpuMachine.ts). */
export interface GpuMachine {
    /** The GPUs nvidia-smi lists; undefined when it could not be run. */
    readonly gpus: readonly { readonly name: string; readonly memoryMiB: number }[] | undefined;
    /** Why nvidia-smi gave no list (not on PATH, no driver, …), when it did not. */
    readonly nvidiaSmiProblem?: string;
    /** node-llama-cpp's prebuilt CUDA binary package is installed (@node-llama-cpp/linux-x64-cuda). */
    readonly hasPrebuiltCudaBinary: boolean;
    /** A local CUDA build (`npm run build-llama -- --gpu cuda`) is in node-llama-cpp's localBuilds. */
    readonly hasLocalCudaBuild: boolean;
    /** The CUDA compiler, when one is on PATH or in CUDA_HOME / CUDA_PATH. */
    readonly nvccPath: string | undefined;
    /** llama-server built with -DGGML_CUDA=ON is already in the cache. */
    readonly hasCudaLlamaServer: boolean;
    /** The devices node-llama-cpp's Vulkan binary sees, software ones included; undefined when it was not asked. */
    readonly vulkanDevices?: readonly ComputeDevice[];
    /** Why the Vulkan binary listed no device, when it did not. */
    readonly vulkanProblem?: string;
    /** node-llama-cpp's prebuilt Vulkan binary (@node-llama-cpp/linux-x64-vulkan) or a local Vulkan build is there. */
    readonly hasVulkanBinary?: boolean;
}

export type GpuPresetName = "1b" | "tiny";

/** One model the benchmark runs: a preset's geometry, generated in `quant`. */
export interface GpuModelArm {
    readonly preset: GpuPresetName;
    readonly quant: "f16" | "q4_k";
    /** Prompt lengths handed off from prefill to decode, tokens. */
    readonly handoffPromptTokens: readonly number[];
}

/** Speculative decoding on the device: `target` decodes what `draft` drafts, against `target` alone. */
export interface SpeculationArm {
    readonly target: GpuModelArm;
    readonly draft: GpuModelArm;
    readonly promptTokens: number;
    readonly numGenerated: number;
}

export type PeerArm =
    | { readonly kind: "run"; readonly buildFirst: boolean; readonly workspaceCounts: readonly number[] }
    | { readonly kind: "skip"; readonly reason: string };

export type GpuPlan =
    | { readonly ok: false; readonly reason: string }
    | {
          readonly ok: true;
          readonly backend: GpuBenchBackend;
          readonly gpuName: string;
          /** Only a software device (lavapipe): every arm runs end to end, and no time it prints is a speed figure. */
          readonly smoke: boolean;
          /** Variables the bench sets for its own processes before node-llama-cpp loads (ggml skips a software device without them). */
          readonly environment: Readonly<Record<string, string>>;
          /** Which node-llama-cpp binary runs the engine. */
          readonly binary: "local CUDA build" | "prebuilt CUDA binary" | "Vulkan binary";
          readonly models: readonly GpuModelArm[];
          readonly speculation: SpeculationArm;
          readonly peer: PeerArm;
          /** The models the peer arm compares on (none when it is skipped). */
          readonly peerModels: readonly GpuModelArm[];
          /** A budget, not a measurement: what the steps may take, s; the plan keeps it under `GPU_BENCH_BUDGET_S`. */
          readonly estimatedSeconds: number;
      };

/** `--backend` names neither backend. */
export class GpuBackendArgumentError extends Error {
    override readonly name = "GpuBackendArgumentError";
    readonly code = "gpu_backend_argument";
}

/** The script must fit in ten minutes on the GPU machine. */
export const GPU_BENCH_BUDGET_S = 600;

/** Budgets per step on a current data-centre or desktop GPU, s (generation of each model file is CPU work, done once). */
const STEP_BUDGET_S = {
    modelGeneration: 60,
    handoffArm: 45,
    speculationArm: 40,
    peerPerModel: 80,
    llamaServerCudaBuild: 240
} as const;

/** Budgets per step of a smoke run on lavapipe with the tiny model, s. */
const SMOKE_STEP_BUDGET_S = { modelGeneration: 5, handoffArm: 30, speculationArm: 30 } as const;

const HANDOFF_PROMPT_TOKENS = [2048, 8192] as const;
/** Short prompts on a software device, each at least a page so that prefill hands it off: the arm runs end to end, the figures mean nothing. */
const SMOKE_HANDOFF_PROMPT_TOKENS = [256, 512] as const;
const PEER_WORKSPACE_COUNTS = [1, 4] as const;
const SOFTWARE_VULKAN_ENVIRONMENT = { GGML_VK_VISIBLE_DEVICES: "0" } as const;

export const VULKAN_PEER_SKIP_REASON =
    "no llama-server built for Vulkan here (Debian 12's Vulkan headers 1.3.239 are older than this llama.cpp needs)";

/** The backend `--backend <name>` (or `--backend=<name>`) names in the bench's arguments, or undefined for the machine's choice. */
export function gpuBackendFromArguments(args: readonly string[]): GpuBenchBackend | undefined {
    const index = args.findIndex((arg) => arg === "--backend" || arg.startsWith("--backend="));
    if (index === -1) {
        return undefined;
    }
    const value = args[index]!.startsWith("--backend=") ? args[index]!.slice("--backend=".length) : args[index + 1];
    if (value === undefined || !(gpuBenchBackends as readonly string[]).includes(value)) {
        throw new GpuBackendArgumentError(
            `--backend is ${value === undefined ? "given without a name" : `"${value}"`}; use --backend cuda or --backend vulkan, or leave it out ` +
                "for CUDA when nvidia-smi lists a GPU, else Vulkan."
        );
    }
    return value as GpuBenchBackend;
}

/** CUDA when nvidia-smi lists a GPU, else Vulkan when a device is visible; `requested` overrides. */
export function chooseGpuBackend(machine: GpuMachine, requested: GpuBenchBackend | undefined): GpuBenchBackend {
    if (requested !== undefined) {
        return requested;
    }
    if (machine.gpus !== undefined && machine.gpus.length > 0) {
        return "cuda";
    }
    return (machine.vulkanDevices?.length ?? 0) > 0 ? "vulkan" : "cuda";
}

export function planGpuBench(machine: GpuMachine, requested?: GpuBenchBackend): GpuPlan {
    return chooseGpuBackend(machine, requested) === "vulkan" ? planVulkan(machine, requested !== undefined) : planCuda(machine);
}

function planCuda(machine: GpuMachine): GpuPlan {
    if (machine.gpus === undefined || machine.gpus.length === 0) {
        const why = machine.gpus === undefined ? (machine.nvidiaSmiProblem ?? "nvidia-smi could not be run") : "nvidia-smi lists no GPU";
        const vulkan = machine.vulkanDevices === undefined ? "" : `, nor a Vulkan device (${machine.vulkanProblem ?? "none listed"})`;
        return {
            ok: false,
            reason:
                `No NVIDIA GPU on this machine (${why})${vulkan}. \`npm run bench -- gpu\` measures Kvault on CUDA and needs an NVIDIA GPU ` +
                "with its driver, or on Vulkan a visible device (`-- gpu --backend vulkan`); on this machine run the CPU benchmarks " +
                "instead (`npm run bench`, `npm run bench -- peer`)."
        };
    }
    const gpu = machine.gpus[0]!;
    if (!machine.hasLocalCudaBuild && !machine.hasPrebuiltCudaBinary) {
        return {
            ok: false,
            reason:
                `The GPU (${gpu.name}) is there, but node-llama-cpp has no CUDA binary: @node-llama-cpp/linux-x64-cuda is not installed ` +
                "and no local CUDA build was found. Build one with `npm run build-llama -- --gpu cuda` (needs the CUDA toolkit), then run this again."
        };
    }
    const models: GpuModelArm[] = [
        { preset: "1b", quant: "f16", handoffPromptTokens: HANDOFF_PROMPT_TOKENS },
        { preset: "1b", quant: "q4_k", handoffPromptTokens: HANDOFF_PROMPT_TOKENS }
    ];
    let peer: PeerArm;
    if (machine.hasCudaLlamaServer) {
        peer = { kind: "run", buildFirst: false, workspaceCounts: PEER_WORKSPACE_COUNTS };
    } else if (machine.nvccPath !== undefined) {
        peer = { kind: "run", buildFirst: true, workspaceCounts: PEER_WORKSPACE_COUNTS };
    } else {
        peer = {
            kind: "skip",
            reason:
                "no CUDA compiler (nvcc not on PATH, nor in CUDA_HOME or CUDA_PATH), so no llama-server with -DGGML_CUDA=ON can be built; " +
                "install the CUDA toolkit to compare against llama-server"
        };
    }
    let estimatedSeconds = models.length * (STEP_BUDGET_S.modelGeneration + STEP_BUDGET_S.handoffArm) + STEP_BUDGET_S.speculationArm;
    let peerModels: readonly GpuModelArm[] = [];
    if (peer.kind === "run") {
        estimatedSeconds += peer.buildFirst ? STEP_BUDGET_S.llamaServerCudaBuild : 0;
        // Both models when they fit in the budget beside the build, else the Q4 model only.
        peerModels =
            estimatedSeconds + models.length * STEP_BUDGET_S.peerPerModel <= GPU_BENCH_BUDGET_S
                ? models
                : models.filter((model) => model.quant === "q4_k");
        estimatedSeconds += peerModels.length * STEP_BUDGET_S.peerPerModel;
    }
    return {
        ok: true,
        backend: "cuda",
        gpuName: gpu.name,
        smoke: false,
        environment: {},
        binary: machine.hasLocalCudaBuild ? "local CUDA build" : "prebuilt CUDA binary",
        models,
        // The 1b target drafted by its own Q4_K file: the same tokenizer, a quarter of the weight bytes.
        speculation: { target: models[0]!, draft: models[1]!, promptTokens: 256, numGenerated: 128 },
        peer,
        peerModels,
        estimatedSeconds
    };
}

function planVulkan(machine: GpuMachine, named: boolean): GpuPlan {
    const devices = machine.vulkanDevices ?? [];
    if (devices.length === 0) {
        const why = machine.vulkanProblem ?? "node-llama-cpp's Vulkan binary listed no device";
        return {
            ok: false,
            reason:
                `No Vulkan device on this machine (${why})${named ? "" : " and no NVIDIA GPU"}. Install a Vulkan driver (Debian's ` +
                "mesa-vulkan-drivers gives lavapipe, a software device for a smoke run), or run the CPU benchmarks instead (`npm run bench`)."
        };
    }
    if (machine.hasVulkanBinary === false) {
        return {
            ok: false,
            reason:
                `The Vulkan device (${devices[0]!.name}) is there, but node-llama-cpp has no Vulkan binary: @node-llama-cpp/linux-x64-vulkan ` +
                "is not installed and no local Vulkan build was found. Build one with `npm run build-llama -- --gpu vulkan`, then run this again."
        };
    }
    const hardware = devices.find((device) => device.type === "gpu");
    const peer: PeerArm = { kind: "skip", reason: VULKAN_PEER_SKIP_REASON };
    if (hardware !== undefined) {
        const models: GpuModelArm[] = [
            { preset: "1b", quant: "f16", handoffPromptTokens: HANDOFF_PROMPT_TOKENS },
            { preset: "1b", quant: "q4_k", handoffPromptTokens: HANDOFF_PROMPT_TOKENS }
        ];
        return {
            ok: true,
            backend: "vulkan",
            gpuName: hardware.name,
            smoke: false,
            environment: {},
            binary: "Vulkan binary",
            models,
            speculation: { target: models[0]!, draft: models[1]!, promptTokens: 256, numGenerated: 128 },
            peer,
            peerModels: [],
            estimatedSeconds: models.length * (STEP_BUDGET_S.modelGeneration + STEP_BUDGET_S.handoffArm) + STEP_BUDGET_S.speculationArm
        };
    }
    // Only software devices: the smallest model and prompts, ggml told to use the device.
    const tiny: GpuModelArm = { preset: "tiny", quant: "f16", handoffPromptTokens: SMOKE_HANDOFF_PROMPT_TOKENS };
    return {
        ok: true,
        backend: "vulkan",
        gpuName: devices[0]!.name,
        smoke: true,
        environment: SOFTWARE_VULKAN_ENVIRONMENT,
        binary: "Vulkan binary",
        models: [tiny],
        // The tiny model drafts for itself: the smallest pair that shares a tokenizer.
        speculation: { target: tiny, draft: tiny, promptTokens: 64, numGenerated: 32 },
        peer,
        peerModels: [],
        estimatedSeconds: SMOKE_STEP_BUDGET_S.modelGeneration + SMOKE_STEP_BUDGET_S.handoffArm + SMOKE_STEP_BUDGET_S.speculationArm
    };
}
