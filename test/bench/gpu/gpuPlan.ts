// What `npm run bench -- gpu` will do on this machine, decided from what was found on it (pure, so
// that its decisions are unit-tested on machines without a GPU): refuse without an NVIDIA GPU or a
// CUDA binary for node-llama-cpp, and skip the llama-server arm, saying why, without nvcc.

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
}

/** One model the benchmark runs: the `1b` preset's geometry, generated in `quant`. */
export interface GpuModelArm {
    readonly preset: "1b";
    readonly quant: "f16" | "q4_k";
    /** Prompt lengths handed off from prefill to decode, tokens. */
    readonly handoffPromptTokens: readonly number[];
}

export type PeerArm =
    | { readonly kind: "run"; readonly buildFirst: boolean; readonly workspaceCounts: readonly number[] }
    | { readonly kind: "skip"; readonly reason: string };

export type GpuPlan =
    | { readonly ok: false; readonly reason: string }
    | {
          readonly ok: true;
          readonly gpuName: string;
          /** Which node-llama-cpp binary runs the engine on CUDA. */
          readonly binary: "local CUDA build" | "prebuilt CUDA binary";
          readonly models: readonly GpuModelArm[];
          readonly peer: PeerArm;
          /** The models the peer arm compares on (none when it is skipped). */
          readonly peerModels: readonly GpuModelArm[];
          /** A budget, not a measurement: what the steps may take, s; the plan keeps it under `GPU_BENCH_BUDGET_S`. */
          readonly estimatedSeconds: number;
      };

/** The script must fit in ten minutes on the GPU machine. */
export const GPU_BENCH_BUDGET_S = 600;

/** Budgets per step on a current data-centre or desktop GPU, s (generation of each model file is CPU work, done once). */
const STEP_BUDGET_S = {
    modelGeneration: 60,
    handoffArm: 45,
    peerPerModel: 80,
    llamaServerCudaBuild: 240
} as const;

const HANDOFF_PROMPT_TOKENS = [2048, 8192] as const;
const PEER_WORKSPACE_COUNTS = [1, 4] as const;

export function planGpuBench(machine: GpuMachine): GpuPlan {
    if (machine.gpus === undefined || machine.gpus.length === 0) {
        const why = machine.gpus === undefined ? (machine.nvidiaSmiProblem ?? "nvidia-smi could not be run") : "nvidia-smi lists no GPU";
        return {
            ok: false,
            reason:
                `No NVIDIA GPU on this machine (${why}). \`npm run bench -- gpu\` measures Kvault on CUDA and needs an NVIDIA GPU ` +
                "with its driver; on this machine run the CPU benchmarks instead (`npm run bench`, `npm run bench -- peer`)."
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
    let estimatedSeconds = models.length * (STEP_BUDGET_S.modelGeneration + STEP_BUDGET_S.handoffArm);
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
        gpuName: gpu.name,
        binary: machine.hasLocalCudaBuild ? "local CUDA build" : "prebuilt CUDA binary",
        models,
        peer,
        peerModels,
        estimatedSeconds
    };
}
