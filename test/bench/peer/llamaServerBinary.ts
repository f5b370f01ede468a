// llama.cpp's own server, built once from the llama.cpp source that node-llama-cpp ships (its git
// bundle of the very release its binaries come from), so Kvault and its peer run the same kernels.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { nativeCompilerFlags } from "../../../engine/runtime/localLlamaBuild.js";
import { repositoryRoot } from "../../support/generatedModels.js";

const llamaDirectory = path.join(repositoryRoot, "node_modules", "node-llama-cpp", "llama");
const sourceDirectory = path.join(repositoryRoot, ".cache", "llama.cpp");
const buildDirectory = path.join(sourceDirectory, "build");
/** A full build takes about 10 minutes on 2 cores; past this something is wrong. */
const BUILD_TIMEOUT_MS = 40 * 60 * 1000;

/** The release node-llama-cpp's binaries were built from, e.g. "v0.4.0". */
export function bundledLlamaCppRelease(): string {
    const info = JSON.parse(fs.readFileSync(path.join(llamaDirectory, "llama.cpp.info.json"), "utf8")) as { tag?: unknown };
    if (typeof info.tag !== "string") {
        throw new Error(`${path.join(llamaDirectory, "llama.cpp.info.json")} names no llama.cpp tag.`);
    }
    return info.tag;
}

/**
 * The path of `llama-server` (and `llama-bench` beside it), built natively (GGML_NATIVE, OpenMP,
 * Release) into .cache/llama.cpp/build unless a build of the same release is already there. With
 * `cuda`, built with -DGGML_CUDA=ON for this machine's GPU into .cache/llama.cpp/build-cuda.
 */
export function ensureLlamaServer(log: (line: string) => void = console.log, options: { readonly cuda?: boolean } = {}): string {
    const release = bundledLlamaCppRelease();
    // the same flags as Kvault's native build (AMX and AVX512-FP16 left out), so both run the same kernels
    const compilerFlags = nativeCompilerFlags().join(" ");
    const flags = compilerFlags === "" ? [] : [`-DCMAKE_C_FLAGS=${compilerFlags}`, `-DCMAKE_CXX_FLAGS=${compilerFlags}`];
    const stampText = [release, ...flags].join("\n");
    const directory = options.cuda === true ? `${buildDirectory}-cuda` : buildDirectory;
    const stamp = path.join(directory, "kvault-release.txt");
    const binary = path.join(directory, "bin", "llama-server");
    if (fs.existsSync(binary) && fs.existsSync(stamp) && fs.readFileSync(stamp, "utf8") === stampText) {
        return binary;
    }
    if (!fs.existsSync(path.join(sourceDirectory, "CMakeLists.txt"))) {
        fs.rmSync(sourceDirectory, { recursive: true, force: true });
        run("git", ["clone", "--quiet", path.join(llamaDirectory, "gitRelease.bundle"), sourceDirectory]);
    }
    log(
        `Building llama-server ${release}${options.cuda === true ? " for CUDA" : ""} from node-llama-cpp's bundled source into ` +
            `${path.relative(repositoryRoot, directory)} (about 10 minutes on 2 cores)…`
    );
    run("cmake", [
        "-S",
        sourceDirectory,
        "-B",
        directory,
        "-G",
        "Ninja",
        "-DCMAKE_BUILD_TYPE=Release",
        "-DGGML_NATIVE=ON",
        ...flags,
        ...(options.cuda === true ? ["-DGGML_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=native"] : []),
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_SERVER=ON",
        "-DLLAMA_CURL=OFF",
        "-DLLAMA_OPENSSL=OFF"
    ]);
    run("cmake", ["--build", directory, "--target", "llama-server", "llama-bench"]);
    fs.writeFileSync(stamp, stampText);
    return binary;
}

function run(command: string, args: readonly string[]): void {
    const result = spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"], timeout: BUILD_TIMEOUT_MS });
    if (result.error !== undefined || result.status !== 0) {
        throw new Error(
            `${command} ${args.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`}). ` +
                "Building llama-server needs cmake, ninja and a C++ compiler (apt-get install cmake ninja-build g++)."
        );
    }
}
