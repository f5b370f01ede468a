import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findLocalBuilds, localBuildCmakeOptions, nativeCompilerFlags } from "../../../../engine/runtime/localLlamaBuild.js";

// The folders node-llama-cpp leaves in llama/localBuilds, written as it writes them (a Release/
// folder with _nlcBuildMetadata.json, and buildDone.status once the build finished), in a temp
// directory: which of them the engine would prefer over the prebuilt binary.

const directories: string[] = [];

function localBuilds(): string {
    const directory = mkdtempSync(path.join(os.tmpdir(), "kvault-local-builds-"));
    directories.push(directory);
    return directory;
}

function writeBuild(
    directory: string,
    folder: string,
    customCmakeOptions: Record<string, string>,
    { done = true, gpu = false as string | false } = {}
): void {
    mkdirSync(path.join(directory, folder, "Release"), { recursive: true });
    const metadata = { buildOptions: { gpu, customCmakeOptions, platform: "linux", arch: "x64" } };
    writeFileSync(path.join(directory, folder, "Release", "_nlcBuildMetadata.json"), JSON.stringify(metadata));
    if (done) {
        writeFileSync(path.join(directory, folder, "buildDone.status"), "");
    }
}

afterEach(() => {
    for (const directory of directories.splice(0)) {
        rmSync(directory, { recursive: true, force: true });
    }
});

describe("findLocalBuilds", () => {
    it("finds nothing where no build was made: the engine loads the prebuilt binary", () => {
        expect(findLocalBuilds(path.join(localBuilds(), "missing"))).toEqual([]);
        expect(findLocalBuilds(localBuilds())).toEqual([]);
    });

    it("finds a finished build of each flavour by its cmake options, native first", () => {
        const directory = localBuilds();
        writeBuild(directory, "linux-x64-aaa", localBuildCmakeOptions.portable);
        writeBuild(directory, "linux-x64-bbb", localBuildCmakeOptions.native);
        expect(findLocalBuilds(directory)).toEqual([
            { flavor: "native", gpu: false, folder: path.join(directory, "linux-x64-bbb") },
            { flavor: "portable", gpu: false, folder: path.join(directory, "linux-x64-aaa") }
        ]);
    });

    it("ignores a build still running, one with other options, and a folder whose metadata is not JSON", () => {
        const directory = localBuilds();
        writeBuild(directory, "linux-x64-running", localBuildCmakeOptions.native, { done: false });
        writeBuild(directory, "linux-x64", {}); // a plain `node-llama-cpp source build`: not ours
        writeBuild(directory, "linux-x64-more", { ...localBuildCmakeOptions.native, GGML_CUDA: "1" });
        mkdirSync(path.join(directory, "linux-x64-broken", "Release"), { recursive: true });
        writeFileSync(path.join(directory, "linux-x64-broken", "Release", "_nlcBuildMetadata.json"), "{ half");
        writeFileSync(path.join(directory, "linux-x64-broken", "buildDone.status"), "");
        expect(findLocalBuilds(directory)).toEqual([]);
    });

    it("reports the GPU a build is for", () => {
        const directory = localBuilds();
        writeBuild(directory, "linux-x64-cuda-ccc", localBuildCmakeOptions.portable, { gpu: "cuda" });
        expect(findLocalBuilds(directory)).toEqual([
            { flavor: "portable", gpu: "cuda", folder: path.join(directory, "linux-x64-cuda-ccc") }
        ]);
    });

    it("finds the patched addon on a prebuilt's libraries (npm run build-llama -- --gpu vulkan) after the builds of the whole of llama.cpp", () => {
        const directory = localBuilds();
        writeBuild(directory, "linux-x64-vulkan-ddd", localBuildCmakeOptions["patched-prebuilt"], { gpu: "vulkan" });
        writeBuild(directory, "linux-x64-vulkan-eee", localBuildCmakeOptions.native, { gpu: "vulkan" });
        expect(findLocalBuilds(directory)).toEqual([
            { flavor: "native", gpu: "vulkan", folder: path.join(directory, "linux-x64-vulkan-eee") },
            { flavor: "patched-prebuilt", gpu: "vulkan", folder: path.join(directory, "linux-x64-vulkan-ddd") }
        ]);
        // the patch's revision names it too, so an addon of an older patch is not taken for this one
        expect(localBuildCmakeOptions["patched-prebuilt"].KVAULT_ADDON_PATCH).toBe(localBuildCmakeOptions.native.KVAULT_ADDON_PATCH);
    });

    it("leaves AMX and AVX512-FP16 out of a native x86-64 build with GCC or Clang, and adds nothing elsewhere", () => {
        const amxOff = ["-U__AMX_TILE__", "-U__AMX_INT8__", "-U__AMX_BF16__", "-U__AVX512FP16__"];
        for (const platform of ["linux", "darwin"]) {
            expect(nativeCompilerFlags("x64", platform)).toEqual(amxOff);
        }
        expect(nativeCompilerFlags("x64", "win32")).toEqual([]);
        expect(nativeCompilerFlags("arm64", "darwin")).toEqual([]);
        expect(nativeCompilerFlags("arm64", "linux")).toEqual([]);
        // in the Release flags, which cmake-js leaves alone, after CMake's own; a build made before them is not taken for the native flavour
        const native = localBuildCmakeOptions.native;
        if (nativeCompilerFlags().length > 0) {
            const release = `-O3 -DNDEBUG ${nativeCompilerFlags().join(" ")}`;
            expect(native).toMatchObject({ CMAKE_C_FLAGS_RELEASE: release, CMAKE_CXX_FLAGS_RELEASE: release });
        } else {
            expect(native).not.toHaveProperty("CMAKE_CXX_FLAGS_RELEASE");
        }
        expect(native).not.toHaveProperty("CMAKE_CXX_FLAGS"); // cmake-js overwrites it
        expect(localBuildCmakeOptions.portable).not.toHaveProperty("CMAKE_CXX_FLAGS_RELEASE");
    });
});
