import path from "node:path";
import type { GpuBackendName } from "../../contract/engineCompute.js";
import { KvaultError } from "../core/KvaultError.js";

/**
 * The plan of a "patched-prebuilt" build (localLlamaBuild.ts): node-llama-cpp's addon sources, with
 * Kvault's patch applied, compiled on their own and linked against the llama and ggml libraries of
 * node-llama-cpp's prebuilt package for a GPU backend. Nothing of llama.cpp is compiled, so it needs
 * no GPU SDK (no nvcc, no Vulkan headers newer than the system's) and takes one compiler pass over
 * about twenty files. The prebuilt's libraries are copied beside the addon, as in any build folder:
 * node-llama-cpp loads the GPU and CPU backends from the addon's own folder (ggml_backend_load_all_from_path),
 * and the patch's thread pool reaches the CPU backend's functions through ggml_backend_reg_get_proc_address.
 *
 * Pure: the caller lists the files and reads the metadata; runPrebuiltAddonBuild.ts carries it out.
 */
export interface PrebuiltAddonBuildInputs {
    readonly platform: NodeJS.Platform;
    readonly arch: string;
    readonly gpu: GpuBackendName;
    /** node_modules/@node-llama-cpp */
    readonly packagesDirectory: string;
    /** The file names in the prebuilt package's bins folder, undefined when the package is not installed. */
    readonly prebuiltFiles: readonly string[] | undefined;
    /** Whether the package's "-ext" twin has a fallback folder of backends (CUDA's, for an older driver). */
    readonly extFallback: boolean;
    /** The llama.cpp release the prebuilt was made from (its _nlcBuildMetadata.json). */
    readonly prebuiltRelease: string;
    /** node-llama-cpp's llama folder: its addon sources (patched) and its clone of llama.cpp's source, for the headers. */
    readonly llamaDirectory: string;
    /** The release of that clone (llama.cpp.info.json's tag): the headers must be those of the libraries. */
    readonly sourceRelease: string;
    /** The addon's .cpp files, relative to llamaDirectory/addon. */
    readonly addonSources: readonly string[];
    readonly nodeAddonApiDirectory: string;
    readonly nodeApiHeadersDirectory: string;
    /** Whether vulkan/vulkan.hpp is there: node-llama-cpp's Vulkan addon checks the driver's API version with it. */
    readonly vulkanHeaders: boolean;
    /** Where object files go. */
    readonly objectDirectory: string;
    /** The build's Release folder. */
    readonly outputDirectory: string;
}

export interface CompileStep {
    readonly source: string;
    readonly object: string;
    readonly args: readonly string[];
}

export interface PrebuiltAddonBuildPlan {
    /** The prebuilt package's bins folder, whose files (all but its own addon) are copied into outputDirectory. */
    readonly prebuiltDirectory: string;
    readonly copies: readonly string[];
    /** The "-ext" package's fallback folder, copied as the build's fallback/ (node-llama-cpp loads it when the first backend fails); absent when none. */
    readonly fallbackDirectory?: string;
    readonly compiles: readonly CompileStep[];
    /** The compiler's arguments that link the addon, against the copies in outputDirectory. */
    readonly link: readonly string[];
}

/** The platform's name in node-llama-cpp's package and folder names. */
export function nodeLlamaCppPlatform(platform: NodeJS.Platform): "linux" | "mac" | "win" | undefined {
    return platform === "linux" ? "linux" : platform === "darwin" ? "mac" : platform === "win32" ? "win" : undefined;
}

/** The prebuilt package for a GPU backend, e.g. "linux-x64-vulkan", "mac-arm64-metal". */
export function prebuiltPackageName(platform: "linux" | "mac" | "win", arch: string, gpu: GpuBackendName): string {
    return `${platform}-${arch}-${gpu}`;
}

/** Names no prebuilt package of this platform and backend: nothing to link against. */
export class PrebuiltPackageMissingError extends KvaultError {
    readonly code = "prebuilt_package_missing";
}

/** The prebuilt's libraries and the llama.cpp headers come from different releases: an addon built from one would misread the other's structures. */
export class PrebuiltReleaseMismatchError extends KvaultError {
    readonly code = "prebuilt_release_mismatch";
}

/** Windows' prebuilt packages ship DLLs without the import libraries a linker needs. */
export class AddonOnlyBuildUnsupportedError extends KvaultError {
    readonly code = "addon_only_build_unsupported";
}

/** The addon's own copy in the prebuilt folder and its metadata are replaced by ours, never copied. */
const NOT_COPIED = new Set(["llama-addon.node", "llama-addon.lib", "_nlcBuildMetadata.json"]);

/**
 * The libraries the addon links by name: llama, llama-common, ggml and ggml-base. The backends
 * (libggml-cpu-*, libggml-vulkan, libggml-cuda, libggml-metal…) are not linked: ggml loads them at
 * run time, and the CPU variant it picks is the one the thread pool is asked of.
 */
function isLinkedLibrary(file: string, extension: string): boolean {
    return file.endsWith(extension) && file.startsWith("lib") && (!file.startsWith("libggml-") || file === `libggml-base${extension}`);
}

export function planPrebuiltAddonBuild(inputs: PrebuiltAddonBuildInputs): PrebuiltAddonBuildPlan {
    const platform = nodeLlamaCppPlatform(inputs.platform);
    if (platform === "win") {
        throw new AddonOnlyBuildUnsupportedError(
            `An addon-only build links against the prebuilt's libraries, and node-llama-cpp's Windows packages ship their DLLs ` +
                `without import libraries. On Windows build the whole of llama.cpp: npm run build-llama -- --gpu ${inputs.gpu} --full ` +
                `(with the ${inputs.gpu === "cuda" ? "CUDA toolkit" : "Vulkan SDK"} installed).`
        );
    }
    if (platform === undefined) {
        throw new PrebuiltPackageMissingError(
            `node-llama-cpp ships no prebuilt binaries for ${inputs.platform}; build the whole of llama.cpp with --full.`
        );
    }
    const name = prebuiltPackageName(platform, inputs.arch, inputs.gpu);
    const prebuiltDirectory = path.join(inputs.packagesDirectory, name, "bins", name);
    if (inputs.prebuiltFiles === undefined || !inputs.prebuiltFiles.includes("llama-addon.node")) {
        throw new PrebuiltPackageMissingError(
            `No prebuilt ${inputs.gpu} binary of node-llama-cpp here (${prebuiltDirectory}): the package @node-llama-cpp/${name} ` +
                `is not installed, or does not exist for ${platform}-${inputs.arch}. Run npm ci on this machine, or build the whole ` +
                `of llama.cpp: npm run build-llama -- --gpu ${inputs.gpu} --full.`
        );
    }
    if (inputs.prebuiltRelease !== inputs.sourceRelease) {
        throw new PrebuiltReleaseMismatchError(
            `The prebuilt ${inputs.gpu} libraries are of llama.cpp ${inputs.prebuiltRelease}, the source node-llama-cpp cloned is ` +
                `${inputs.sourceRelease}: an addon compiled against one cannot run on the other. Reinstall node-llama-cpp (npm ci) so both match.`
        );
    }
    const extension = platform === "mac" ? ".dylib" : ".so";
    const copies = inputs.prebuiltFiles.filter((file) => !NOT_COPIED.has(file));
    const linked = copies.filter((file) => isLinkedLibrary(file, extension)).sort();
    const source = path.join(inputs.llamaDirectory, "llama.cpp");
    const vulkanInfo = inputs.gpu === "vulkan" && inputs.vulkanHeaders;
    const compileFlags = [
        "-std=c++17",
        "-O3",
        "-DNDEBUG",
        "-fPIC",
        "-fexceptions",
        "-DBUILDING_NODE_EXTENSION",
        "-DNAPI_VERSION=7",
        "-DGGML_BACKEND_SHARED",
        "-DGGML_SHARED",
        "-DLLAMA_SHARED",
        ...(vulkanInfo ? ["-DGPU_INFO_USE_VULKAN"] : []),
        ...[
            inputs.nodeAddonApiDirectory,
            inputs.nodeApiHeadersDirectory,
            source,
            path.join(source, "common"),
            path.join(source, "include"),
            path.join(source, "src"),
            path.join(source, "ggml", "include"),
            path.join(source, "vendor")
        ].map((directory) => `-I${directory}`)
    ];
    const compiles = inputs.addonSources.map((file) => {
        const object = path.join(inputs.objectDirectory, `${file.replaceAll(/[\\/]/g, "_").replace(/\.cpp$/, "")}.o`);
        const sourceFile = path.join(inputs.llamaDirectory, "addon", file);
        return { source: sourceFile, object, args: [...compileFlags, "-c", sourceFile, "-o", object] };
    });
    const output = path.join(inputs.outputDirectory, "llama-addon.node");
    const platformLink =
        platform === "mac"
            ? ["-dynamiclib", "-undefined", "dynamic_lookup", "-Wl,-rpath,@loader_path"]
            : ["-shared", "-Wl,-rpath,$ORIGIN", "-Wl,-soname,llama-addon.node"];
    const link = [
        ...platformLink,
        "-o",
        output,
        ...compiles.map((step) => step.object),
        ...linked.map((file) => path.join(inputs.outputDirectory, file)),
        ...(vulkanInfo ? ["-lvulkan"] : [])
    ];
    const fallbackDirectory = inputs.extFallback ? path.join(inputs.packagesDirectory, `${name}-ext`, "bins", name, "fallback") : undefined;
    return { prebuiltDirectory, copies, ...(fallbackDirectory === undefined ? {} : { fallbackDirectory }), compiles, link };
}
