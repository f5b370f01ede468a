// What `npm run bench -- gpu` finds on the machine: the GPUs nvidia-smi lists, node-llama-cpp's CUDA
// binaries, the CUDA compiler, a llama-server already built for CUDA, and, when CUDA is not the
// backend, the devices node-llama-cpp's Vulkan binary sees.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { computeDeviceOf } from "../../../engine/runtime/autoGpuRefusal.js";
import { findLocalBuilds } from "../../../engine/runtime/localLlamaBuild.js";
import { llamaServerBuildDirectory } from "../peer/llamaServerBinary.js";
import type { GpuBenchBackend, GpuMachine } from "./gpuPlan.js";

/** Loading the Vulkan binary and enumerating devices, software ones included, may take this long (ms). */
const VULKAN_PROBE_TIMEOUT_MS = 120_000;

/** Asks for the Vulkan devices only when they can matter: Vulkan named, or no NVIDIA GPU to pick first. */
export function probeGpuMachine(repositoryRoot: string, requested?: GpuBenchBackend): GpuMachine {
    const smi = spawnSync("nvidia-smi", ["--query-gpu=name,memory.total", "--format=csv,noheader,nounits"], {
        encoding: "utf8",
        timeout: 20_000
    });
    let gpus: GpuMachine["gpus"];
    let nvidiaSmiProblem: string | undefined;
    if (smi.error !== undefined) {
        nvidiaSmiProblem = (smi.error as NodeJS.ErrnoException).code === "ENOENT" ? "nvidia-smi is not on PATH" : smi.error.message;
    } else if (smi.status !== 0) {
        nvidiaSmiProblem = `nvidia-smi exited with ${smi.status}: ${(smi.stderr || smi.stdout).trim().slice(0, 300)}`;
    } else {
        gpus = smi.stdout
            .split("\n")
            .filter((line) => line.trim() !== "")
            .map((line) => {
                const [name = "", memory = ""] = line.split(",").map((field) => field.trim());
                return { name, memoryMiB: Number(memory) };
            });
    }
    const askVulkan = requested === "vulkan" || (requested === undefined && (gpus === undefined || gpus.length === 0));
    return {
        gpus,
        ...(askVulkan && probeVulkan(repositoryRoot)),
        ...(nvidiaSmiProblem !== undefined && { nvidiaSmiProblem }),
        hasPrebuiltCudaBinary: fs.existsSync(
            path.join(repositoryRoot, "node_modules", "@node-llama-cpp", "linux-x64-cuda", "package.json")
        ),
        hasLocalCudaBuild: findLocalBuilds().some((build) => build.gpu === "cuda"),
        nvccPath: findNvcc(),
        hasCudaLlamaServer: fs.existsSync(path.join(llamaServerBuildDirectory({ cuda: true }), "bin", "llama-server"))
    };
}

function findNvcc(): string | undefined {
    const candidates = [
        ...(process.env.PATH ?? "").split(path.delimiter).map((directory) => path.join(directory, "nvcc")),
        ...[process.env.CUDA_HOME, process.env.CUDA_PATH, "/usr/local/cuda"].flatMap((root) =>
            root === undefined ? [] : [path.join(root, "bin", "nvcc")]
        )
    ];
    return candidates.find((candidate) => candidate !== "nvcc" && fs.existsSync(candidate));
}

function probeVulkan(repositoryRoot: string): Pick<GpuMachine, "vulkanDevices" | "vulkanProblem" | "hasVulkanBinary"> {
    const hasVulkanBinary =
        fs.existsSync(path.join(repositoryRoot, "node_modules", "@node-llama-cpp", "linux-x64-vulkan", "package.json")) ||
        findLocalBuilds().some((build) => build.gpu === "vulkan");
    const listed = listVulkanDeviceNames();
    return {
        hasVulkanBinary,
        vulkanDevices: (listed.names ?? []).map(computeDeviceOf),
        ...(listed.problem !== undefined && { vulkanProblem: listed.problem })
    };
}

/**
 * The devices node-llama-cpp's Vulkan binary sees, asked in a child process with software devices
 * made visible (GGML_VK_VISIBLE_DEVICES=0 unless set). From a script file: node-llama-cpp tests a
 * binary in a process started with its parent's arguments, which `node -e` would run as that script again.
 */
function listVulkanDeviceNames(): { names?: string[]; problem?: string } {
    const entry = pathToFileURL(createRequire(import.meta.url).resolve("node-llama-cpp")).href;
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-gpu-bench-probe-"));
    const scriptPath = path.join(directory, "listVulkanDevices.mjs");
    fs.writeFileSync(
        scriptPath,
        `import { getLlama, LlamaLogLevel } from ${JSON.stringify(entry)};\n` +
            'const llama = await getLlama({ gpu: "vulkan", build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });\n' +
            "console.log(JSON.stringify(await llama.getGpuDeviceNames()));\n" +
            "await llama.dispose();\n"
    );
    try {
        const result = spawnSync(process.execPath, [scriptPath], {
            env: { ...process.env, GGML_VK_VISIBLE_DEVICES: process.env.GGML_VK_VISIBLE_DEVICES ?? "0" },
            encoding: "utf8",
            timeout: VULKAN_PROBE_TIMEOUT_MS
        });
        if (result.error !== undefined || result.status !== 0) {
            const detail = result.error?.message ?? (result.stderr || result.stdout).trim().split("\n").at(-1) ?? "";
            return { problem: `node-llama-cpp's Vulkan binary did not start: ${detail.slice(0, 300)}` };
        }
        const names = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "[]") as string[];
        return names.length === 0 ? { names, problem: "node-llama-cpp's Vulkan binary listed no device" } : { names };
    } finally {
        fs.rmSync(directory, { recursive: true, force: true });
    }
}
