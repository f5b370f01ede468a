import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseBuildLlamaArgs } from "../../../../engine/runtime/buildLlamaArgs.js";
import { localBuildFor, slowerPathOf } from "../../../../engine/runtime/LlamaRuntime.js";
import type { LocalBuildInfo } from "../../../../engine/runtime/localLlamaBuild.js";
import {
    AddonOnlyBuildUnsupportedError,
    planPrebuiltAddonBuild,
    PrebuiltPackageMissingError,
    PrebuiltReleaseMismatchError,
    type PrebuiltAddonBuildInputs
} from "../../../../engine/runtime/prebuiltAddonBuild.js";

// The files of node-llama-cpp 3.21.1's @node-llama-cpp/linux-x64-vulkan bins folder, as npm installs them.
const VULKAN_FILES = [
    "_nlcBuildMetadata.json",
    "libggml-base.so",
    "libggml-cpu-haswell.so",
    "libggml-cpu-x64.so",
    "libggml-vulkan.so",
    "libggml.vulkan.v0.4.0.so",
    "libllama-common.so",
    "libllama.vulkan.v0.4.0.so",
    "llama-addon.node"
];

const inputs: PrebuiltAddonBuildInputs = {
    platform: "linux",
    arch: "x64",
    gpu: "vulkan",
    packagesDirectory: "/app/node_modules/@node-llama-cpp",
    prebuiltFiles: VULKAN_FILES,
    extFallback: false,
    prebuiltRelease: "v0.4.0",
    llamaDirectory: "/app/node_modules/node-llama-cpp/llama",
    sourceRelease: "v0.4.0",
    addonSources: ["AddonContext.cpp", "AddonContextThreadpool.cpp", path.join("globals", "getGpuInfo.cpp")],
    nodeAddonApiDirectory: "/app/node_modules/node-addon-api",
    nodeApiHeadersDirectory: "/app/node_modules/node-api-headers/include",
    vulkanHeaders: false,
    objectDirectory: "/tmp/objects",
    outputDirectory: "/out/Release"
};

describe("planPrebuiltAddonBuild: the patched addon alone, on the prebuilt's libraries", () => {
    it("compiles each addon file once, against llama.cpp's headers, and links the four libraries the prebuilt addon links, not the backends", () => {
        const plan = planPrebuiltAddonBuild(inputs);
        expect(plan.prebuiltDirectory).toBe("/app/node_modules/@node-llama-cpp/linux-x64-vulkan/bins/linux-x64-vulkan");
        expect(plan.compiles.map((step) => step.object)).toEqual([
            "/tmp/objects/AddonContext.o",
            "/tmp/objects/AddonContextThreadpool.o",
            "/tmp/objects/globals_getGpuInfo.o"
        ]);
        const [first] = plan.compiles;
        expect(first!.args).toEqual(expect.arrayContaining(["-DGGML_BACKEND_SHARED", "-DLLAMA_SHARED", "-DNAPI_VERSION=7"]));
        expect(first!.args).toContain("-I/app/node_modules/node-llama-cpp/llama/llama.cpp/ggml/include");
        expect(first!.args.slice(-4)).toEqual([
            "-c",
            "/app/node_modules/node-llama-cpp/llama/addon/AddonContext.cpp",
            "-o",
            "/tmp/objects/AddonContext.o"
        ]);
        expect(first!.args).not.toContain("-DGPU_INFO_USE_VULKAN");

        const linked = plan.link.filter((arg) => arg.startsWith("/out/Release/lib"));
        expect(linked).toEqual([
            "/out/Release/libggml-base.so",
            "/out/Release/libggml.vulkan.v0.4.0.so",
            "/out/Release/libllama-common.so",
            "/out/Release/libllama.vulkan.v0.4.0.so"
        ]);
        expect(plan.link).toEqual(expect.arrayContaining(["-shared", "-Wl,-rpath,$ORIGIN", "-o", "/out/Release/llama-addon.node"]));
        // every library is copied beside the addon (ggml loads the backends from its folder), but not the prebuilt's own addon
        expect(plan.copies).toEqual(VULKAN_FILES.filter((file) => file !== "llama-addon.node" && file !== "_nlcBuildMetadata.json"));
        expect(plan.fallbackDirectory).toBeUndefined();
    });

    it("checks the driver's Vulkan version as the prebuilt does when Vulkan-Hpp's header is there, and links the loader for it", () => {
        const plan = planPrebuiltAddonBuild({ ...inputs, vulkanHeaders: true });
        expect(plan.compiles[0]!.args).toContain("-DGPU_INFO_USE_VULKAN");
        expect(plan.link.at(-1)).toBe("-lvulkan");
        // CUDA's addon never includes Vulkan's header
        const cuda = planPrebuiltAddonBuild({ ...inputs, gpu: "cuda", vulkanHeaders: true, extFallback: true });
        expect(cuda.compiles[0]!.args).not.toContain("-DGPU_INFO_USE_VULKAN");
        expect(cuda.prebuiltDirectory).toBe("/app/node_modules/@node-llama-cpp/linux-x64-cuda/bins/linux-x64-cuda");
        expect(cuda.fallbackDirectory).toBe("/app/node_modules/@node-llama-cpp/linux-x64-cuda-ext/bins/linux-x64-cuda/fallback");
    });

    it("links a macOS addon against dylibs, its N-API symbols left to Node", () => {
        const plan = planPrebuiltAddonBuild({
            ...inputs,
            platform: "darwin",
            arch: "arm64",
            gpu: "metal",
            prebuiltFiles: [
                "libggml-base.dylib",
                "libggml-metal.dylib",
                "libggml.metal.v0.4.0.dylib",
                "libllama.metal.v0.4.0.dylib",
                "llama-addon.node"
            ]
        });
        expect(plan.prebuiltDirectory).toBe("/app/node_modules/@node-llama-cpp/mac-arm64-metal/bins/mac-arm64-metal");
        expect(plan.link).toEqual(expect.arrayContaining(["-dynamiclib", "-undefined", "dynamic_lookup", "-Wl,-rpath,@loader_path"]));
        expect(plan.link.filter((arg) => arg.endsWith(".dylib"))).toEqual([
            "/out/Release/libggml-base.dylib",
            "/out/Release/libggml.metal.v0.4.0.dylib",
            "/out/Release/libllama.metal.v0.4.0.dylib"
        ]);
    });

    it("refuses, saying what to do, where it cannot link: no prebuilt package, another release, Windows", () => {
        expect(() => planPrebuiltAddonBuild({ ...inputs, prebuiltFiles: undefined })).toThrow(PrebuiltPackageMissingError);
        expect(() => planPrebuiltAddonBuild({ ...inputs, prebuiltFiles: undefined })).toThrow(
            /@node-llama-cpp\/linux-x64-vulkan is not installed.*npm run build-llama -- --gpu vulkan --full/
        );
        expect(() => planPrebuiltAddonBuild({ ...inputs, prebuiltRelease: "v0.3.9" })).toThrow(PrebuiltReleaseMismatchError);
        expect(() => planPrebuiltAddonBuild({ ...inputs, prebuiltRelease: "v0.3.9" })).toThrow(
            /of llama.cpp v0.3.9, the source node-llama-cpp cloned is v0.4.0/
        );
        expect(() => planPrebuiltAddonBuild({ ...inputs, platform: "win32" })).toThrow(AddonOnlyBuildUnsupportedError);
        expect(() => planPrebuiltAddonBuild({ ...inputs, platform: "win32", gpu: "cuda" })).toThrow(
            /--gpu cuda --full \(with the CUDA toolkit/
        );
    });
});

describe("parseBuildLlamaArgs: which build `npm run build-llama` makes", () => {
    it("keeps the CPU's builds as they were, and makes --gpu X the patched addon on the prebuilt unless --full", () => {
        expect(parseBuildLlamaArgs([])).toEqual({ flavor: "native", gpu: false, force: false });
        expect(parseBuildLlamaArgs(["--portable"])).toEqual({ flavor: "portable", gpu: false, force: false });
        expect(parseBuildLlamaArgs(["--gpu", "vulkan"])).toEqual({ flavor: "patched-prebuilt", gpu: "vulkan", force: false });
        expect(parseBuildLlamaArgs(["--gpu", "cuda", "--force"])).toEqual({ flavor: "patched-prebuilt", gpu: "cuda", force: true });
        expect(parseBuildLlamaArgs(["--gpu", "vulkan", "--full"])).toEqual({ flavor: "native", gpu: "vulkan", force: false });
        expect(parseBuildLlamaArgs(["--portable", "--gpu", "metal"])).toEqual({ flavor: "portable", gpu: "metal", force: false });
    });

    it("refuses what it does not know, and --full without a GPU", () => {
        expect(parseBuildLlamaArgs(["--gpu", "rocm"])).toBeUndefined();
        expect(parseBuildLlamaArgs(["--gpu"])).toBeUndefined();
        expect(parseBuildLlamaArgs(["--full"])).toBeUndefined();
        expect(parseBuildLlamaArgs(["--fast"])).toBeUndefined();
    });
});

describe("the engine's choice of build, and the slower path it names", () => {
    const cpu: LocalBuildInfo = { flavor: "native", gpu: false, folder: "/builds/linux-x64-a" };
    const vulkan: LocalBuildInfo = { flavor: "patched-prebuilt", gpu: "vulkan", folder: "/builds/linux-x64-vulkan-b" };

    it("offers a named backend its own build, and auto a GPU's build before the CPU's (node-llama-cpp tries the GPU binaries first)", () => {
        expect(localBuildFor("vulkan", [cpu, vulkan])).toBe(vulkan);
        expect(localBuildFor("cuda", [cpu, vulkan])).toBeUndefined();
        expect(localBuildFor(false, [cpu, vulkan])).toBe(cpu);
        expect(localBuildFor("auto", [cpu, vulkan])).toBe(vulkan);
        expect(localBuildFor("auto", [cpu])).toBe(cpu);
        expect(localBuildFor("auto", [])).toBeUndefined();
    });

    it("says why the prebuilt runs: no build for this backend (and the command that makes one), one that did not load, or builds turned off", () => {
        expect(slowerPathOf("cuda", undefined, [cpu, vulkan])).toBe(
            "slower path: node-llama-cpp's prebuilt without Kvault's patch, states through files, decode on libuv's pool; " +
                "no Kvault build for cuda here (npm run build-llama -- --gpu cuda makes one)"
        );
        expect(slowerPathOf("vulkan", vulkan, [cpu, vulkan])).toMatch(/Kvault's build in \/builds\/linux-x64-vulkan-b did not load/);
        expect(slowerPathOf("cpu", undefined, [])).toMatch(/no Kvault build for cpu here \(npm run build-llama makes one\)$/);
        expect(slowerPathOf("vulkan", undefined, undefined)).toMatch(
            /Kvault's builds are turned off for this engine \(llamaBinary: prebuilt\)$/
        );
    });
});
