import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/**
 * The llama.cpp builds Kvault can compile from the source node-llama-cpp ships (`npm run build-llama`).
 *
 * Why a build of our own: node-llama-cpp's prebuilt linux-x64 binaries are made in its CI mode, with
 * GGML_NATIVE=OFF, GGML_OPENMP=OFF and every CPU variant loaded as a dynamic backend; on the 2-core
 * zen4 machine this was measured on, that costs about 2× in prefill against the same source built
 * with the machine's own instruction set and OpenMP's thread pool (docs/ARCHITECTURE.md, Threads).
 *
 * - "native": for this machine only (GGML_NATIVE=ON, OpenMP). What `npm run build-llama` makes.
 * - "portable": for shipping (every CPU variant chosen at load time, as the prebuilt does, but with
 *   OpenMP), made per platform by the installers workflow (`npm run build-llama -- --portable`).
 *
 * node-llama-cpp names a build folder by its cmake options, so a flavour's folder is found only when
 * getLlama is given the same options; a plain getLlama() (every other caller in node_modules) never
 * picks these builds up.
 */
export type LocalBuildFlavor = "native" | "portable";

export const localBuildCmakeOptions: Readonly<Record<LocalBuildFlavor, Readonly<Record<string, string>>>> = {
    native: { GGML_NATIVE: "ON", GGML_OPENMP: "ON", GGML_BACKEND_DL: "OFF" },
    portable: { GGML_NATIVE: "OFF", GGML_OPENMP: "ON", GGML_CPU_ALL_VARIANTS: "ON", GGML_BACKEND_DL: "ON" }
};

/** The flavours in the order the engine prefers them: a build for this very machine first. */
export const localBuildFlavors: readonly LocalBuildFlavor[] = ["native", "portable"];

/** One finished local build, as node-llama-cpp's build metadata describes it. */
export interface LocalBuildInfo {
    readonly flavor: LocalBuildFlavor;
    /** node-llama-cpp's gpu for it: false for the CPU, else "cuda", "vulkan" or "metal". */
    readonly gpu: string | false;
    readonly folder: string;
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
