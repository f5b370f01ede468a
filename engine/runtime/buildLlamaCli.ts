// `npm run build-llama [-- --portable] [--gpu cuda|vulkan|metal [--full]] [--force]` compiles node-llama-cpp's
// binary from the llama.cpp source it ships, with the flags that measured fastest (localLlamaBuild.ts),
// into node-llama-cpp's llama/localBuilds, where the engine looks first. `--gpu X` alone compiles only
// the patched addon, against the prebuilt X package's libraries (buildLlamaArgs.ts, prebuiltAddonBuild.ts). A second run finds the
// finished build and returns at once; --force rebuilds. Takes minutes; the model and browser tests'
// global setups run it once (test/support/ensureLocalLlamaBuild.ts). A finished build is also kept in
// the native build cache outside the checkout (nativeBuildCache.ts), so that after `npm ci` or in a
// fresh clone the same build is copied back instead of compiled again.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";
import { applyAddonPatch } from "./addonPatch/applyAddonPatch.js";
import { buildLlamaUsage, parseBuildLlamaArgs } from "./buildLlamaArgs.js";
import {
    addonSourceDirectory,
    findLocalBuilds,
    localBuildCacheEntry,
    localBuildCmakeOptions,
    localBuildsDirectory
} from "./localLlamaBuild.js";
import { nativeBuildCacheDirectory, restoreFromCache, storeInCache } from "./nativeBuildCache.js";
import { runPrebuiltAddonBuild } from "./runPrebuiltAddonBuild.js";

async function main(): Promise<number> {
    const args = parseBuildLlamaArgs(process.argv.slice(2));
    if (args === undefined) {
        process.stderr.write(buildLlamaUsage);
        return 2;
    }
    const existing = findLocalBuilds().find((build) => build.flavor === args.flavor && build.gpu === args.gpu);
    const cacheEntry = localBuildCacheEntry(args.flavor, args.gpu);
    if (existing !== undefined && !args.force) {
        process.stdout.write(`llama.cpp ${args.flavor} build already there: ${existing.folder} (--force rebuilds it)\n`);
        if (!existsSync(path.join(nativeBuildCacheDirectory(), cacheEntry))) {
            storeInCache(existing.folder, path.join(cacheEntry, path.basename(existing.folder)));
        }
        return 0;
    }
    if (!args.force && restoreCachedBuild(cacheEntry)) {
        const restored = findLocalBuilds().find((build) => build.flavor === args.flavor && build.gpu === args.gpu);
        if (restored !== undefined && ensureLlamaCppSource()) {
            process.stdout.write(
                `llama.cpp ${args.flavor} build copied from the build cache (${path.join(nativeBuildCacheDirectory(), cacheEntry)}): ${restored.folder}\n`
            );
            return 0;
        }
    }
    const addonDirectory = addonSourceDirectory();
    const patch = applyAddonPatch(addonDirectory);
    process.stdout.write(`Kvault's addon patch (one thread per context, states through memory): ${patch} in ${addonDirectory}\n`);
    const started = performance.now();
    if (args.flavor === "patched-prebuilt" && args.gpu !== false) {
        if (!ensureLlamaCppSource()) {
            process.stderr.write(
                "node-llama-cpp's clone of llama.cpp's source (its headers) could not be made; rerun, or build with --full.\n"
            );
            return 1;
        }
        const folder = await runPrebuiltAddonBuild(args.gpu, (line) => process.stdout.write(`${line}\n`));
        const cached = storeInCache(folder, path.join(cacheEntry, path.basename(folder)));
        const seconds = ((performance.now() - started) / 1000).toFixed(0);
        process.stdout.write(
            `Built in ${seconds} s: ${folder}\nKept in the build cache: ${cached}\n` +
                `Kvault's engine now prefers it on ${args.gpu} ("${args.gpu}, patched prebuilt, …").\n`
        );
        return 0;
    }
    process.stdout.write(
        `Building llama.cpp (${args.flavor}, ${args.gpu === false ? "cpu" : args.gpu}) from node-llama-cpp's source; ` +
            `this takes minutes (about 4 on 2 cores).\n`
    );
    const llama = await getLlama({
        gpu: args.gpu,
        build: "forceRebuild",
        cmakeOptions: { ...localBuildCmakeOptions[args.flavor] },
        maxThreads: os.availableParallelism(),
        logLevel: LlamaLogLevel.error,
        progressLogs: true
    });
    const buildType = llama.buildType;
    await llama.dispose();
    const built = findLocalBuilds().find((build) => build.flavor === args.flavor && build.gpu === args.gpu);
    if (buildType !== "localBuild" || built === undefined) {
        process.stderr.write(
            `The build finished but no ${args.flavor} local build was found in node-llama-cpp's llama/localBuilds ` +
                `(it loaded a ${buildType} binary). Kvault keeps using the prebuilt binary; rerun with --force.\n`
        );
        return 1;
    }
    const cached = storeInCache(built.folder, path.join(cacheEntry, path.basename(built.folder)));
    process.stdout.write(`Kept in the build cache: ${cached}\n`);
    const seconds = ((performance.now() - started) / 1000).toFixed(0);
    process.stdout.write(`Built in ${seconds} s: ${built.folder}\nKvault's engine now prefers it ("cpu, local build, …").\n`);
    return 0;
}

/**
 * node-llama-cpp looks for a local build's grammars (and more) in its own clone of llama.cpp's source
 * (llama/llama.cpp), which a build makes and `npm ci` removes; a build copied from the cache needs it
 * too. Cloned as node-llama-cpp clones it, from the git bundle it ships (no network), its patches
 * applied, without building. False when that fails: the caller then builds, which clones as well.
 */
function ensureLlamaCppSource(): boolean {
    const packageDirectory = path.join(localBuildsDirectory(), "..", "..");
    if (existsSync(path.join(packageDirectory, "llama", "llama.cpp", ".git"))) {
        return true;
    }
    const result = spawnSync(
        process.execPath,
        [path.join(packageDirectory, "dist", "cli", "cli.js"), "source", "download", "--skipBuild", "--noUsageExample"],
        { stdio: ["ignore", "ignore", "inherit"], timeout: SOURCE_CLONE_TIMEOUT_MS }
    );
    return result.status === 0 && existsSync(path.join(packageDirectory, "llama", "llama.cpp", ".git"));
}

/** Cloning llama.cpp from the bundle takes seconds; past this something is wrong. */
const SOURCE_CLONE_TIMEOUT_MS = 5 * 60 * 1000;

/** Copies the cached build of this key (one folder under it) into node-llama-cpp's localBuilds; false when there is none. */
function restoreCachedBuild(cacheEntry: string): boolean {
    let folders: string[];
    try {
        folders = readdirSync(path.join(nativeBuildCacheDirectory(), cacheEntry)).filter((name) => !name.endsWith(".partial"));
    } catch {
        return false;
    }
    const folder = folders[0];
    return (
        folders.length === 1 &&
        folder !== undefined &&
        restoreFromCache(path.join(cacheEntry, folder), path.join(localBuildsDirectory(), folder))
    );
}

process.exitCode = await main();
