import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildKey, compilerVersion, directoryContents } from "./nativeBuildCache.js";

/**
 * The llama.cpp builds Kvault can compile from the source node-llama-cpp ships (`npm run build-llama`).
 *
 * Why a build of our own: node-llama-cpp's prebuilt linux-x64 binaries are made in its CI mode, with
 * GGML_NATIVE=OFF and every CPU variant loaded as a dynamic backend, and its addon runs each
 * context's decodes on whichever libuv pool thread is free. The first slows prefill, the second
 * decode once a second context (prefill beside decode) exists (docs/ARCHITECTURE.md, Threads;
 * figures in docs/measurements.md). So both flavours carry
 * Kvault's patch of the addon (addonPatch/applyAddonPatch.ts: one thread per context for all of its
 * jobs, and KV states saved and loaded through memory instead of files), named in the cmake options (KVAULT_ADDON_PATCH, which cmake itself ignores) so that a build
 * made without it is never taken for one with it, and both keep ggml's own thread pool (GGML_OPENMP=OFF):
 * with OpenMP, every thread that calls llama_decode owns a team of its own, and two contexts' teams
 * slowed each other's decode even with the patch.
 *
 * - "native": for this machine only (GGML_NATIVE=ON). What `npm run build-llama` makes.
 * - "portable": for shipping (every CPU variant chosen at load time, as the prebuilt does), made per
 *   platform by the installers workflow (`npm run build-llama -- --portable`).
 * - "patched-prebuilt": only the addon, compiled with the patch and linked against the llama and ggml
 *   libraries of node-llama-cpp's prebuilt package for a GPU backend, of the same release
 *   (prebuiltAddonBuild.ts; `npm run build-llama -- --gpu vulkan|cuda|metal`): no GPU SDK, no nvcc,
 *   and a Vulkan build on a system whose Vulkan headers are older than llama.cpp's.
 *
 * node-llama-cpp names a build folder by its cmake options, so a flavour's folder is found only when
 * getLlama is given the same options; a plain getLlama() (every other caller in node_modules) never
 * picks these builds up.
 */
export type LocalBuildFlavor = "native" | "portable" | "patched-prebuilt";

/** The addon patch's name and revision, recorded in a local build's cmake options. */
export const addonPatchName = "context-thread-state-memory-threadpool-hashed-pages-5";

/**
 * The compiler flags a native build adds on x86-64 (GCC or Clang; MSVC's native build detects
 * features its own way): -march=native turns on whatever the CPU's cpuid reports, and two of those
 * features are left out, by undefining the macros ggml chooses its kernels by (which every
 * compiler version takes, unlike a -mno- flag for an extension it may not know):
 * - AMX (`__AMX_*__`): a machine can report AMX that its hypervisor never enabled. On a KVM guest
 *   of an Intel Xeon (amx_tile, amx_int8 and amx_bf16 in /proc/cpuinfo) the native build's first
 *   matrix product of a quantized model died with an invalid opcode at `tileloadd`.
 * - AVX512-FP16 (`__AVX512FP16__`): with it, ggml's F16 vector kernels (the F16 KV cache's dot
 *   products in flash attention among them) multiply and add in half precision, so each sum
 *   depends on where its blocks start: the same prompt in another sequence of the same context
 *   left a different state, and greedy answers differed between split and unified mode after
 *   four tokens. Without it they convert to F32 and add there, as on every other CPU.
 */
export function nativeCompilerFlags(arch: string = process.arch, platform: string = process.platform): readonly string[] {
    return arch === "x64" && platform !== "win32" ? ["-U__AMX_TILE__", "-U__AMX_INT8__", "-U__AMX_BF16__", "-U__AVX512FP16__"] : [];
}

/**
 * `flags` as cmake options of a node-llama-cpp build: in the Release configuration's flags, with
 * CMake's own (-O3 -DNDEBUG) kept, because cmake-js sets CMAKE_CXX_FLAGS itself
 * (-DBUILDING_NODE_EXTENSION) and a CMAKE_CXX_FLAGS of ours never reached a C++ file.
 */
function releaseFlagOptions(flags: readonly string[]): Readonly<Record<string, string>> {
    if (flags.length === 0) {
        return {};
    }
    const release = ["-O3", "-DNDEBUG", ...flags].join(" ");
    return { CMAKE_C_FLAGS_RELEASE: release, CMAKE_CXX_FLAGS_RELEASE: release };
}

export const localBuildCmakeOptions: Readonly<Record<LocalBuildFlavor, Readonly<Record<string, string>>>> = {
    native: {
        GGML_NATIVE: "ON",
        GGML_OPENMP: "OFF",
        GGML_BACKEND_DL: "OFF",
        ...releaseFlagOptions(nativeCompilerFlags()),
        KVAULT_ADDON_PATCH: addonPatchName
    },
    portable: {
        GGML_NATIVE: "OFF",
        GGML_OPENMP: "OFF",
        GGML_CPU_ALL_VARIANTS: "ON",
        GGML_BACKEND_DL: "ON",
        KVAULT_ADDON_PATCH: addonPatchName
    },
    // cmake never sees these: they name the build's folder, as the others do, so the engine finds it
    "patched-prebuilt": {
        KVAULT_ADDON_PATCH: addonPatchName,
        KVAULT_PREBUILT_LIBRARIES: "ON"
    }
};

/** The flavours in the order the engine prefers them: a build for this very machine first, the prebuilt's libraries last. */
export const localBuildFlavors: readonly LocalBuildFlavor[] = ["native", "portable", "patched-prebuilt"];

/** One finished local build, as node-llama-cpp's build metadata describes it. */
export interface LocalBuildInfo {
    readonly flavor: LocalBuildFlavor;
    /** node-llama-cpp's gpu for it: false for the CPU, else "cuda", "vulkan" or "metal". */
    readonly gpu: string | false;
    readonly folder: string;
}

/** The addon source node-llama-cpp compiles (llama/addon), which the build patches first. */
export function addonSourceDirectory(): string {
    return path.join(localBuildsDirectory(), "..", "addon");
}

/** node-llama-cpp's own folder of local builds (unpacked from the asar in the installers). */
export function localBuildsDirectory(): string {
    // The package exports only dist/index.js (no ./package.json), so go up from its entry point.
    const entry = createRequire(import.meta.url).resolve("node-llama-cpp");
    return path.join(path.dirname(entry), "..", "llama", "localBuilds");
}

function sameOptions(found: Readonly<Record<string, unknown>>, wanted: Readonly<Record<string, string>>): boolean {
    return Object.keys(found).length === Object.keys(wanted).length && Object.entries(wanted).every(([key, value]) => found[key] === value);
}

function flavorOf(customCmakeOptions: Readonly<Record<string, unknown>>): LocalBuildFlavor | undefined {
    return localBuildFlavors.find((flavor) => sameOptions(customCmakeOptions, localBuildCmakeOptions[flavor]));
}

/**
 * The finished local builds of ours in `directory`: a folder counts only when node-llama-cpp marked it
 * done (buildDone.status) and its metadata names one of our flavours. Unreadable folders are not ours.
 */
export function findLocalBuilds(directory: string = localBuildsDirectory()): LocalBuildInfo[] {
    if (!existsSync(directory)) {
        return [];
    }
    const builds: LocalBuildInfo[] = [];
    for (const folder of readdirSync(directory)) {
        const metadataPath = path.join(directory, folder, "Release", "_nlcBuildMetadata.json");
        if (!existsSync(path.join(directory, folder, "buildDone.status")) || !existsSync(metadataPath)) {
            continue;
        }
        try {
            const metadata = JSON.parse(readFileSync(metadataPath, "utf8")) as {
                buildOptions?: { gpu?: string | false; customCmakeOptions?: Record<string, unknown> };
            };
            const flavor = flavorOf(metadata.buildOptions?.customCmakeOptions ?? {});
            if (flavor !== undefined) {
                builds.push({ flavor, gpu: metadata.buildOptions?.gpu ?? false, folder: path.join(directory, folder) });
            }
        } catch {
            continue; // not a build of ours, or a half-written one: the prebuilt still works
        }
    }
    return builds.sort((a, b) => localBuildFlavors.indexOf(a.flavor) - localBuildFlavors.indexOf(b.flavor));
}

/** What a native build is compiled for: the CPU's feature flags (a -march=native binary runs only where they are). */
export function cpuFeatures(): string {
    try {
        const flags = /^flags\s*:(.*)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
        if (flags?.[1] !== undefined) {
            return flags[1].trim();
        }
    } catch {
        // not Linux: the model name stands for the features
    }
    return os.cpus()[0]?.model ?? "unknown cpu";
}

/**
 * The build cache's entry for a flavour's build (nativeBuildCache.ts): keyed by node-llama-cpp's version,
 * the llama.cpp release it ships, the flavour's cmake options, the GPU, the addon patch's files, the
 * compiler and, for a native build, the CPU it is compiled for.
 */
export function localBuildCacheEntry(flavor: LocalBuildFlavor, gpu: string | false): string {
    const packageDirectory = path.join(localBuildsDirectory(), "..", "..");
    const patchDirectory = path.join(path.dirname(fileURLToPath(import.meta.url)), "addonPatch");
    const key = buildKey([
        readFileSync(path.join(packageDirectory, "package.json"), "utf8"),
        readFileSync(path.join(packageDirectory, "llama", "llama.cpp.info.json"), "utf8"),
        flavor,
        String(gpu),
        JSON.stringify(localBuildCmakeOptions[flavor]),
        ...directoryContents(patchDirectory),
        compilerVersion(),
        `${process.platform}-${process.arch}`,
        flavor === "native" ? cpuFeatures() : flavor
    ]);
    return path.join("node-llama-cpp", `${flavor}-${gpu === false ? "cpu" : gpu}-${key}`);
}
