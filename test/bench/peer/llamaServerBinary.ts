// llama.cpp's own server, built once from the llama.cpp source that node-llama-cpp ships (its git
// bundle of the very release its binaries come from), so Kvault and its peer run the same kernels.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { cpuFeatures, nativeCompilerFlags } from "../../../engine/runtime/localLlamaBuild.js";
import { buildKey, compilerVersion, nativeBuildCacheDirectory } from "../../../engine/runtime/nativeBuildCache.js";
import { repositoryRoot } from "../../support/generatedModels.js";

const llamaDirectory = path.join(repositoryRoot, "node_modules", "node-llama-cpp", "llama");
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
 * Release) unless a build of the same release, flags and compiler is already there. With `cuda`,
 * built with -DGGML_CUDA=ON for this machine's GPU. Builds live in the native build cache outside
 * the checkout (engine/runtime/nativeBuildCache.ts: llama-server/<release>-<key>), so a fresh clone
 * of the project on the same machine reuses them.
 */
export function ensureLlamaServer(log: (line: string) => void = console.log, options: { readonly cuda?: boolean } = {}): string {
    const release = bundledLlamaCppRelease();
    const { flags, stampText } = buildFlags(release);
    const sourceDirectory = path.join(nativeBuildCacheDirectory(), "llama.cpp", release);
    const directory = llamaServerBuildDirectory(options);
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
            `${directory} (about 10 minutes on 2 cores)…`
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

/** The same flags as Kvault's native build (AMX and AVX512-FP16 left out), so both run the same kernels. */
function buildFlags(release: string): { readonly flags: readonly string[]; readonly stampText: string } {
    const compilerFlags = nativeCompilerFlags().join(" ");
    const flags = compilerFlags === "" ? [] : [`-DCMAKE_C_FLAGS=${compilerFlags}`, `-DCMAKE_CXX_FLAGS=${compilerFlags}`];
    return { flags, stampText: [release, ...flags].join("\n") };
}

/** The build folder of llama-server for this release, flags, compiler and CPU (or CUDA), in the native build cache. */
export function llamaServerBuildDirectory(options: { readonly cuda?: boolean } = {}): string {
    const release = bundledLlamaCppRelease();
    const target = options.cuda === true ? "cuda" : "cpu";
    const key = buildKey([buildFlags(release).stampText, target, compilerVersion(), `${process.platform}-${process.arch}`, cpuFeatures()]);
    return path.join(nativeBuildCacheDirectory(), "llama-server", `${release}-${target}-${key}`);
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
