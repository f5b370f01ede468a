import { describe, expect, it } from "vitest";
import { GPU_BENCH_BUDGET_S, planGpuBench, type GpuMachine } from "../../bench/gpu/gpuPlan.js";

const gpuMachine: GpuMachine = {
    gpus: [{ name: "NVIDIA H100 80GB HBM3", memoryMiB: 81_559 }],
    hasPrebuiltCudaBinary: true,
    hasLocalCudaBuild: false,
    nvccPath: "/usr/local/cuda/bin/nvcc",
    hasCudaLlamaServer: false
};

describe("the GPU benchmark's plan", () => {
    it("refuses without a GPU, saying why and what to run instead", () => {
        const plan = planGpuBench({ ...gpuMachine, gpus: undefined, nvidiaSmiProblem: "nvidia-smi is not on PATH" });
        expect(plan).toEqual({
            ok: false,
            reason: expect.stringMatching(/^No NVIDIA GPU on this machine \(nvidia-smi is not on PATH\)\. .*`npm run bench`/)
        });
        expect(planGpuBench({ ...gpuMachine, gpus: [] })).toMatchObject({
            ok: false,
            reason: expect.stringContaining("nvidia-smi lists no GPU")
        });
    });

    it("refuses a GPU without a CUDA binary for node-llama-cpp, naming the build command", () => {
        const plan = planGpuBench({ ...gpuMachine, hasPrebuiltCudaBinary: false });
        expect(plan).toMatchObject({ ok: false, reason: expect.stringContaining("npm run build-llama -- --gpu cuda") });
        expect(plan).toMatchObject({ reason: expect.stringContaining("NVIDIA H100 80GB HBM3") });
    });

    it("runs the 1b preset in F16 and Q4_K, preferring a local CUDA build", () => {
        const prebuilt = planGpuBench(gpuMachine);
        expect(prebuilt).toMatchObject({ ok: true, gpuName: "NVIDIA H100 80GB HBM3", binary: "prebuilt CUDA binary" });
        expect(prebuilt.ok && prebuilt.models.map((model) => `${model.preset} ${model.quant}`)).toEqual(["1b f16", "1b q4_k"]);
        expect(planGpuBench({ ...gpuMachine, hasLocalCudaBuild: true })).toMatchObject({ ok: true, binary: "local CUDA build" });
    });

    it("skips the llama-server arm without nvcc, saying so, and runs it with a built CUDA llama-server on both models", () => {
        const noCompiler = planGpuBench({ ...gpuMachine, nvccPath: undefined });
        expect(noCompiler).toMatchObject({
            ok: true,
            peer: { kind: "skip", reason: expect.stringMatching(/^no CUDA compiler \(nvcc/) },
            peerModels: []
        });
        const built = planGpuBench({ ...gpuMachine, nvccPath: undefined, hasCudaLlamaServer: true });
        expect(built).toMatchObject({ ok: true, peer: { kind: "run", buildFirst: false, workspaceCounts: [1, 4] } });
        expect(built.ok && built.peerModels.map((model) => model.quant)).toEqual(["f16", "q4_k"]);
    });

    it("fits in ten minutes: a llama-server build first leaves the peer arm the Q4 model only", () => {
        const withBuild = planGpuBench(gpuMachine);
        expect(withBuild).toMatchObject({ ok: true, peer: { kind: "run", buildFirst: true } });
        expect(withBuild.ok && withBuild.peerModels.map((model) => model.quant)).toEqual(["q4_k"]);
        for (const machine of [gpuMachine, { ...gpuMachine, hasCudaLlamaServer: true }, { ...gpuMachine, nvccPath: undefined }]) {
            const plan = planGpuBench(machine);
            expect(plan.ok && plan.estimatedSeconds).toBeLessThanOrEqual(GPU_BENCH_BUDGET_S);
        }
    });
});
