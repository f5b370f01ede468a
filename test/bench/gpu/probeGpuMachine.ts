// What `npm run bench -- gpu` finds on the machine: the GPUs nvidia-smi lists, node-llama-cpp's CUDA
// binaries, the CUDA compiler, and a llama-server already built for CUDA.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { findLocalBuilds } from "../../../engine/runtime/localLlamaBuild.js";
import { llamaServerBuildDirectory } from "../peer/llamaServerBinary.js";
import type { GpuMachine } from "./gpuPlan.js";

export function probeGpuMachine(repositoryRoot: string): GpuMachine {
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
    return {
        gpus,
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
