import { describe, expect, it } from "vitest";
import {
    GPU_BENCH_BUDGET_S,
    GpuBackendArgumentError,
    gpuBackendFromArguments,
    planGpuBench,
    VULKAN_PEER_SKIP_REASON,
    type GpuMachine
} from "../../bench/gpu/gpuPlan.js";

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
        const probedVulkan = planGpuBench({ ...gpuMachine, gpus: undefined, vulkanDevices: [], vulkanProblem: "no device listed" });
        expect(probedVulkan).toMatchObject({
            ok: false,
            reason: expect.stringContaining("nor a Vulkan device (no device listed)")
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

/** A machine with no NVIDIA GPU and Mesa's lavapipe, as the CI machine is. */
const lavapipeMachine: GpuMachine = {
    gpus: undefined,
    nvidiaSmiProblem: "nvidia-smi is not on PATH",
    hasPrebuiltCudaBinary: true,
    hasLocalCudaBuild: false,
    nvccPath: undefined,
    hasCudaLlamaServer: false,
    vulkanDevices: [{ name: "llvmpipe (LLVM 15.0.6, 256 bits)", type: "cpu" }],
    hasVulkanBinary: true
};

describe("the GPU benchmark's plan on Vulkan", () => {
    it("picks Vulkan without an NVIDIA GPU when a Vulkan device is visible, and CUDA first when nvidia-smi lists one", () => {
        expect(planGpuBench(lavapipeMachine)).toMatchObject({ ok: true, backend: "vulkan", gpuName: "llvmpipe (LLVM 15.0.6, 256 bits)" });
        expect(planGpuBench({ ...gpuMachine, vulkanDevices: lavapipeMachine.vulkanDevices! })).toMatchObject({ ok: true, backend: "cuda" });
        expect(planGpuBench({ ...gpuMachine, vulkanDevices: lavapipeMachine.vulkanDevices! }, "vulkan")).toMatchObject({
            ok: true,
            backend: "vulkan"
        });
        expect(planGpuBench(lavapipeMachine, "cuda")).toMatchObject({ ok: false, reason: expect.stringContaining("No NVIDIA GPU") });
    });

    it("on a software device alone: a smoke run of the tiny preset on short prompts, ggml told to use the device, the peer skipped", () => {
        const plan = planGpuBench(lavapipeMachine);
        expect(plan).toMatchObject({
            ok: true,
            smoke: true,
            binary: "Vulkan binary",
            environment: { GGML_VK_VISIBLE_DEVICES: "0" },
            models: [{ preset: "tiny", quant: "f16", handoffPromptTokens: [256, 512] }],
            speculation: { target: { preset: "tiny" }, draft: { preset: "tiny" }, promptTokens: 64, numGenerated: 32 },
            peer: { kind: "skip", reason: VULKAN_PEER_SKIP_REASON },
            peerModels: []
        });
        expect(VULKAN_PEER_SKIP_REASON).toContain("1.3.239");
        expect(plan.ok && plan.estimatedSeconds).toBeLessThanOrEqual(GPU_BENCH_BUDGET_S);
    });

    it("on a hardware Vulkan device: the 1b preset in F16 and Q4_K for speed, no variable set, the peer skipped", () => {
        const plan = planGpuBench({
            ...lavapipeMachine,
            vulkanDevices: [...lavapipeMachine.vulkanDevices!, { name: "AMD Radeon RX 7900 XTX", type: "gpu" }]
        });
        expect(plan).toMatchObject({ ok: true, backend: "vulkan", gpuName: "AMD Radeon RX 7900 XTX", smoke: false, environment: {} });
        expect(plan.ok && plan.models.map((model) => `${model.preset} ${model.quant} ${model.handoffPromptTokens.join("/")}`)).toEqual([
            "1b f16 2048/8192",
            "1b q4_k 2048/8192"
        ]);
        expect(plan).toMatchObject({ peer: { kind: "skip" }, speculation: { target: { quant: "f16" }, draft: { quant: "q4_k" } } });
    });

    it("refuses Vulkan without a device or without a Vulkan binary, saying what to install", () => {
        expect(
            planGpuBench(
                { ...lavapipeMachine, vulkanDevices: [], vulkanProblem: "node-llama-cpp's Vulkan binary listed no device" },
                "vulkan"
            )
        ).toEqual({
            ok: false,
            reason: expect.stringMatching(
                /^No Vulkan device on this machine \(node-llama-cpp's Vulkan binary listed no device\)\. .*mesa-vulkan-drivers/
            )
        });
        expect(planGpuBench({ ...lavapipeMachine, hasVulkanBinary: false })).toMatchObject({
            ok: false,
            reason: expect.stringContaining("npm run build-llama -- --gpu vulkan")
        });
    });

    it("reads --backend from the bench's arguments, refusing a name it does not know", () => {
        expect(gpuBackendFromArguments([])).toBeUndefined();
        expect(gpuBackendFromArguments(["--backend", "vulkan"])).toBe("vulkan");
        expect(gpuBackendFromArguments(["--backend=cuda"])).toBe("cuda");
        expect(() => gpuBackendFromArguments(["--backend", "metal"])).toThrow(GpuBackendArgumentError);
        expect(() => gpuBackendFromArguments(["--backend"])).toThrow(
            /--backend is given without a name; use --backend cuda or --backend vulkan/
        );
    });
});
