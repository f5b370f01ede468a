import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { GpuBackendName } from "../../contract/engineCompute.js";
import { KvaultError } from "../core/KvaultError.js";
import { localBuildCmakeOptions, localBuildsDirectory } from "./localLlamaBuild.js";
import { nodeLlamaCppPlatform, planPrebuiltAddonBuild, prebuiltPackageName, type CompileStep } from "./prebuiltAddonBuild.js";

/** One file of the addon compiles in well under a minute; past this the compiler is stuck. */
const COMPILE_TIMEOUT_MS = 10 * 60 * 1000;

/** The C++ compiler, as cmake would pick it. */
const COMPILER = process.env.CXX !== undefined && process.env.CXX !== "" ? process.env.CXX : "c++";

/** Where Vulkan-Hpp's header is found without an SDK (Debian's libvulkan-dev, Homebrew's vulkan-headers). */
const VULKAN_HEADER_PLACES = [
    "/usr/include/vulkan/vulkan.hpp",
    "/usr/local/include/vulkan/vulkan.hpp",
    "/opt/homebrew/include/vulkan/vulkan.hpp"
];

/** A compile or link that did not finish: the compiler's own last lines say why. */
export class AddonCompileError extends KvaultError {
    readonly code = "addon_compile_failed";
}

interface BuildMetadata {
    readonly buildOptions: {
        readonly platformInfo?: unknown;
        readonly llamaCpp?: { readonly repo?: string; readonly release?: string };
    };
}

/**
 * Builds the "patched-prebuilt" flavour for `gpu` (prebuiltAddonBuild.ts) into node-llama-cpp's
 * llama/localBuilds, in the folder its getLlama looks in for these cmake options, and returns that
 * folder. The addon sources must already carry the patch. Made beside the folder and renamed into
 * it once whole, so an interrupted build is never taken for a finished one.
 */
export async function runPrebuiltAddonBuild(gpu: GpuBackendName, log: (line: string) => void): Promise<string> {
    const require = createRequire(import.meta.url);
    const llamaDirectory = path.join(localBuildsDirectory(), "..");
    const packagesDirectory = path.join(llamaDirectory, "..", "..", "@node-llama-cpp");
    const platform = nodeLlamaCppPlatform(process.platform) ?? "linux";
    const name = prebuiltPackageName(platform, process.arch, gpu);
    const prebuiltDirectory = path.join(packagesDirectory, name, "bins", name);
    const prebuiltFiles = existsSync(prebuiltDirectory) ? readdirSync(prebuiltDirectory) : undefined;
    const prebuiltMetadata =
        prebuiltFiles?.includes("_nlcBuildMetadata.json") === true
            ? (JSON.parse(readFileSync(path.join(prebuiltDirectory, "_nlcBuildMetadata.json"), "utf8")) as BuildMetadata)
            : { buildOptions: {} };
    const sourceInfo = JSON.parse(readFileSync(path.join(llamaDirectory, "llama.cpp.info.json"), "utf8")) as {
        tag: string;
        llamaCppGithubRepo: string;
    };
    const objectDirectory = mkdtempSync(path.join(os.tmpdir(), "kvault-addon-build-"));
    const options = localBuildCmakeOptions["patched-prebuilt"];
    const folder = path.join(localBuildsDirectory(), await buildFolderName(gpu, platform, sourceInfo, options));
    const staging = `${folder}.${process.pid}.partial`;
    const plan = planPrebuiltAddonBuild({
        platform: process.platform,
        arch: process.arch,
        gpu,
        packagesDirectory,
        prebuiltFiles,
        extFallback: existsSync(path.join(packagesDirectory, `${name}-ext`, "bins", name, "fallback")),
        prebuiltRelease: prebuiltMetadata.buildOptions.llamaCpp?.release ?? "unknown",
        llamaDirectory,
        sourceRelease: sourceInfo.tag,
        addonSources: listSources(path.join(llamaDirectory, "addon")),
        nodeAddonApiDirectory: path.dirname(require.resolve("node-addon-api/package.json")),
        nodeApiHeadersDirectory: path.join(path.dirname(require.resolve("node-api-headers/package.json")), "include"),
        vulkanHeaders: VULKAN_HEADER_PLACES.some((place) => existsSync(place)),
        objectDirectory,
        outputDirectory: path.join(staging, "Release")
    });
    try {
        rmSync(staging, { recursive: true, force: true });
        mkdirSync(path.join(staging, "Release"), { recursive: true });
        for (const file of plan.copies) {
            cpSync(path.join(plan.prebuiltDirectory, file), path.join(staging, "Release", file), { recursive: true });
        }
        if (plan.fallbackDirectory !== undefined) {
            cpSync(plan.fallbackDirectory, path.join(staging, "Release", "fallback"), { recursive: true });
        }
        log(
            `Compiling ${plan.compiles.length} addon files against ${plan.prebuiltDirectory} (${COMPILER}, ${os.availableParallelism()} at a time)`
        );
        await compileAll(plan.compiles, os.availableParallelism());
        await runCompiler(plan.link, "linking llama-addon.node");
        writeFileSync(
            path.join(staging, "Release", "_nlcBuildMetadata.json"),
            JSON.stringify({
                buildOptions: {
                    customCmakeOptions: options,
                    progressLogs: false,
                    platform,
                    platformInfo: prebuiltMetadata.buildOptions.platformInfo,
                    arch: process.arch,
                    gpu,
                    llamaCpp: { repo: sourceInfo.llamaCppGithubRepo, release: sourceInfo.tag }
                }
            })
        );
        writeFileSync(path.join(staging, "buildDone.status"), "");
        rmSync(folder, { recursive: true, force: true });
        renameSync(staging, folder);
        return folder;
    } finally {
        rmSync(staging, { recursive: true, force: true });
        rmSync(objectDirectory, { recursive: true, force: true });
    }
}

/**
 * The folder node-llama-cpp's getLlama looks in for these options: named by its own function (not
 * exported from its entry point, so imported by path), so a rename in node-llama-cpp cannot leave
 * the build where nothing looks.
 */
async function buildFolderName(
    gpu: GpuBackendName,
    platform: string,
    source: { tag: string; llamaCppGithubRepo: string },
    options: Readonly<Record<string, string>>
): Promise<string> {
    const entry = createRequire(import.meta.url).resolve("node-llama-cpp");
    const module = (await import(
        pathToFileURL(path.join(path.dirname(entry), "bindings", "utils", "getBuildFolderNameForBuildOptions.js")).href
    )) as {
        getBuildFolderNameForBuildOptions(options: unknown): Promise<{ withCustomCmakeOptions: string }>;
    };
    const names = await module.getBuildFolderNameForBuildOptions({
        customCmakeOptions: new Map(Object.entries(options)),
        progressLogs: false,
        platform,
        platformInfo: { name: os.platform(), version: os.release() },
        arch: process.arch,
        gpu,
        llamaCpp: { repo: source.llamaCppGithubRepo, release: source.tag }
    });
    return names.withCustomCmakeOptions;
}

/** The addon's .cpp files, relative to its folder (the folder and its subfolders, as its CMakeLists globs them). */
function listSources(addonDirectory: string): string[] {
    return readdirSync(addonDirectory, { recursive: true, encoding: "utf8" })
        .filter((file) => file.endsWith(".cpp"))
        .sort();
}

async function compileAll(steps: readonly CompileStep[], numParallel: number): Promise<void> {
    const queue = [...steps];
    const worker = async (): Promise<void> => {
        for (let step = queue.shift(); step !== undefined; step = queue.shift()) {
            await runCompiler(step.args, path.basename(step.source));
        }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(numParallel, steps.length)) }, worker));
}

function runCompiler(args: readonly string[], what: string): Promise<void> {
    return new Promise((resolve, reject) => {
        const child = spawn(COMPILER, args, { stdio: ["ignore", "ignore", "pipe"], timeout: COMPILE_TIMEOUT_MS });
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
            stderr = (stderr + chunk).slice(-4000);
        });
        child.on("error", (error) => reject(new AddonCompileError(`${COMPILER} could not start for ${what}: ${error.message}`)));
        child.on("close", (status, signal) => {
            if (status === 0) {
                resolve();
            } else {
                reject(new AddonCompileError(`${COMPILER} failed ${what} (${signal ?? `exit ${status}`}):\n${stderr.trim()}`));
            }
        });
    });
}
