import type { GpuBackendName } from "../../contract/engineCompute.js";
import type { LocalBuildFlavor } from "./localLlamaBuild.js";

/** What `npm run build-llama` is asked to make. */
export interface BuildLlamaArgs {
    readonly flavor: LocalBuildFlavor;
    readonly gpu: false | GpuBackendName;
    readonly force: boolean;
}

export const buildLlamaUsage = "Usage: npm run build-llama -- [--portable] [--gpu cuda|vulkan|metal [--full]] [--force]\n";

/**
 * The build the arguments ask for, undefined when they are not understood:
 * - nothing: the CPU's native build (the whole of llama.cpp, for this machine);
 * - `--gpu X`: the patched addon alone, linked against node-llama-cpp's prebuilt X libraries
 *   ("patched-prebuilt", prebuiltAddonBuild.ts): no GPU SDK needed, one compiler pass over the addon;
 * - `--gpu X --full`: the whole of llama.cpp for X, natively (needs X's SDK: nvcc, or Vulkan headers
 *   as new as llama.cpp's);
 * - `--portable`: the whole of llama.cpp for shipping, with `--gpu X` for that backend.
 */
export function parseBuildLlamaArgs(args: readonly string[]): BuildLlamaArgs | undefined {
    let portable = false;
    let full = false;
    let gpu: false | GpuBackendName = false;
    let force = false;
    for (let i = 0; i < args.length; i++) {
        const arg = args[i]!;
        if (arg === "--portable") {
            portable = true;
        } else if (arg === "--full") {
            full = true;
        } else if (arg === "--force") {
            force = true;
        } else if (arg === "--gpu" && i + 1 < args.length) {
            const value = args[++i];
            if (value !== "cuda" && value !== "vulkan" && value !== "metal") {
                return undefined;
            }
            gpu = value;
        } else {
            return undefined;
        }
    }
    if (full && gpu === false) {
        return undefined; // the CPU build is always the whole of llama.cpp
    }
    const flavor: LocalBuildFlavor = portable ? "portable" : gpu !== false && !full ? "patched-prebuilt" : "native";
    return { flavor, gpu, force };
}
