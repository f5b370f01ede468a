// The installers' configuration (electron-builder.config.ts), checked where Electron's binary
// cannot be downloaded, so nothing can be packaged: electron-builder's own schema and file
// filters say, for each target, which of node-llama-cpp's binaries it would carry and unpack.
import fs from "node:fs";
import path from "node:path";
import { Arch, type Configuration } from "electron-builder";
import { describe, expect, it } from "vitest";
import config, { INSTALLER_ARCHS, refuseForeignBuild } from "../../../electron-builder.config.js";
import { nodeLlamaCppBindingTestModule } from "../../../main/engine/BindingTestRelay.js";
import { builderFilters, loadBuilderConfig, validateBuilderConfig, type BuilderPlatform } from "./builderFilters.js";

const root = path.resolve(import.meta.dirname, "../../..");
/** As the dist scripts' `electron-builder --config electron-builder.config.ts` loads it. */
const loaded = await loadBuilderConfig(root, "electron-builder.config.ts");
const readText = (file: string): string => fs.readFileSync(path.join(root, file), "utf8");

interface Target {
    readonly platform: BuilderPlatform;
    readonly arch: "x64" | "arm64";
    readonly installers: readonly string[];
    /** node-llama-cpp's prebuilt binary packages (@node-llama-cpp/NAME) this target loads. */
    readonly binaryPackages: readonly string[];
}

const TARGETS: readonly Target[] = [
    {
        platform: "linux",
        arch: "x64",
        installers: ["AppImage", "deb"],
        binaryPackages: ["linux-x64", "linux-x64-cuda", "linux-x64-cuda-ext", "linux-x64-vulkan"]
    },
    { platform: "linux", arch: "arm64", installers: ["AppImage", "deb"], binaryPackages: ["linux-arm64"] },
    {
        platform: "win",
        arch: "x64",
        installers: ["nsis"],
        binaryPackages: ["win-x64", "win-x64-cuda", "win-x64-cuda-ext", "win-x64-vulkan"]
    },
    { platform: "win", arch: "arm64", installers: ["nsis"], binaryPackages: ["win-arm64"] },
    { platform: "mac", arch: "arm64", installers: ["dmg"], binaryPackages: ["mac-arm64-metal"] },
    { platform: "mac", arch: "x64", installers: ["dmg"], binaryPackages: ["mac-x64"] }
];
/** Binary packages of architectures Kvault ships no installer for. */
const UNSHIPPED = ["linux-armv7l", "linux-riscv64"];
const ALL_BINARY_PACKAGES = [...TARGETS.flatMap((target) => target.binaryPackages), ...UNSHIPPED];

/** A few files of a binary package: every file where it is installed here, else its usual layout. */
function binaryPackageFiles(name: string): string[] {
    const dir = `node_modules/@node-llama-cpp/${name}`;
    if (fs.existsSync(path.join(root, dir))) {
        return fs
            .readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
            .filter((entry) => entry.isFile())
            .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"));
    }
    const library = name.startsWith("win") ? "ggml.dll" : name.startsWith("mac") ? "libggml.dylib" : "libggml.so";
    return ["package.json", "dist/index.js", `bins/${name}/llama-addon.node`, `bins/${name}/${library}`].map((file) => `${dir}/${file}`);
}

/** What `npm run build-llama` leaves for a target that loads (the folder's name ends in a hash of its cmake options). */
const localBuildFiles = (name: string): string[] => [
    `node_modules/node-llama-cpp/llama/localBuilds/${name}/Release/llama-addon.node`,
    `node_modules/node-llama-cpp/llama/localBuilds/${name}-3l192f405j2t1j/Release/libggml.so`,
    `node_modules/node-llama-cpp/llama/localBuilds/${name}-3l192f405j2t1j/Release/_nlcBuildMetadata.json`,
    `node_modules/node-llama-cpp/llama/localBuilds/${name}-3l192f405j2t1j/buildDone.status`
];

describe("electron-builder.config.ts", () => {
    // Two schema validations take seconds on a busy machine.
    it("loads as electron-builder loads it and passes its schema, which rejects a misspelled option", { timeout: 60_000 }, async () => {
        expect(loaded.electronFuses).toEqual(config.electronFuses);
        await expect(validateBuilderConfig(loaded)).resolves.toBeUndefined();
        const misspelled = { ...loaded, electronFuses: { ...loaded.electronFuses, runAsNod: false } } as Configuration;
        await expect(validateBuilderConfig(misspelled)).rejects.toThrow(/electronFuses/);
    });

    it("builds AppImage and deb for Linux, NSIS for Windows and DMG for macOS, for x64 and arm64", () => {
        for (const target of TARGETS) {
            // Names only, no architecture: each build is for the machine's, or the one asked for.
            expect(config[target.platform]?.target, target.platform).toEqual(target.installers);
        }
        expect([...INSTALLER_ARCHS].sort()).toEqual(["arm64", "x64"]);
        expect(TARGETS.map((target) => `${target.platform}-${target.arch}`).sort()).toEqual(
            (["linux", "win", "mac"] as const).flatMap((platform) => INSTALLER_ARCHS.map((arch) => `${platform}-${arch}`)).sort()
        );
    });

    it("refuses to build for another platform or architecture than the machine's", () => {
        expect(config.beforePack).toBe(refuseForeignBuild);
        const here = { electronPlatformName: process.platform, arch: Arch[process.arch as keyof typeof Arch] };
        expect(() => refuseForeignBuild(here)).not.toThrow();
        const otherArch = process.arch === "arm64" ? Arch.x64 : Arch.arm64;
        expect(() => refuseForeignBuild({ ...here, arch: otherArch })).toThrow(
            `cannot build the ${process.platform}-${Arch[otherArch]} installer`
        );
        const otherPlatform = process.platform === "win32" ? "linux" : "win32";
        expect(() => refuseForeignBuild({ ...here, electronPlatformName: otherPlatform })).toThrow(/Build it on a .* machine/);
    });

    it("knows every binary package node-llama-cpp can install", () => {
        const manifest = JSON.parse(readText("node_modules/node-llama-cpp/package.json")) as {
            optionalDependencies: Record<string, string>;
        };
        const names = Object.keys(manifest.optionalDependencies).map((name) => name.replace("@node-llama-cpp/", ""));
        expect(ALL_BINARY_PACKAGES.slice().sort()).toEqual(names.sort());
    });

    it("sets the fuses: no run-as-node, no NODE_OPTIONS, no inspector, only the integrity-checked asar", () => {
        // With runAsNode off no process of the app can child_process.fork a script; the engine's
        // binary test goes through main (the relay), as the tests below and test/model/main/ show.
        expect(config.electronFuses).toMatchObject({
            runAsNode: false,
            enableNodeOptionsEnvironmentVariable: false,
            enableNodeCliInspectArguments: false,
            enableEmbeddedAsarIntegrityValidation: true,
            onlyLoadAppFromAsar: true
        });
        expect(config.asar ?? true).toBe(true);
    });

    it("signs macOS apps ad hoc with the hardened runtime's JIT and library exceptions", () => {
        expect(config.mac).toMatchObject({ identity: "-", hardenedRuntime: true });
        for (const file of [config.mac?.entitlements, config.mac?.entitlementsInherit]) {
            const plist = readText(file ?? "missing").replace(/\s+/g, "");
            for (const key of ["allow-jit", "allow-unsigned-executable-memory", "disable-library-validation"]) {
                expect(plist, `${file}: ${key}`).toContain(`<key>com.apple.security.cs.${key}</key><true/>`);
            }
        }
    });

    describe.each(TARGETS)("for $platform $arch", (target) => {
        const filters = builderFilters(loaded, target.platform, target.arch, root);
        const others = ALL_BINARY_PACKAGES.filter((name) => !target.binaryPackages.includes(name));

        it("carries the app's bundles and package.json, not its sources", () => {
            for (const file of [
                "out/main/index.js",
                "out/main/engineProcess.js",
                // The engine entry loads the engine in a chunk of its own, after the binding-test relay is in place.
                "out/main/engineProcessMain-DaZ2HRPK.js",
                "out/preload/index.cjs",
                "out/renderer/index.html",
                "package.json"
            ]) {
                expect(filters.packs(file), file).toBe(true);
            }
            for (const file of [
                "engine/KvEngine.ts",
                "main/index.ts",
                "electron-builder.config.ts",
                "README.md",
                "resources/entitlements.mac.plist",
                "release/builder-debug.yml"
            ]) {
                expect(filters.packs(file), file).toBe(false);
            }
        });

        it("carries its node-llama-cpp binaries, unpacked from the asar, and node-llama-cpp itself inside it", () => {
            const files = [...target.binaryPackages.flatMap(binaryPackageFiles), ...localBuildFiles(`${target.platform}-${target.arch}`)];
            expect(files.some((file) => file.endsWith("/llama-addon.node"))).toBe(true);
            for (const file of files) {
                expect(filters.packs(file), file).toBe(true);
                expect(filters.unpacks(file), file).toBe(true);
            }
            for (const file of [
                "node_modules/node-llama-cpp/package.json",
                "node_modules/node-llama-cpp/dist/index.js",
                // Main forks it, by path, as each binding test (a utilityProcess runs a script from the asar as the engine's does).
                "node_modules/node-llama-cpp/dist/bindings/utils/testBindingBinary.js",
                "node_modules/node-llama-cpp/llama/binariesGithubRelease.json"
            ]) {
                expect(filters.packs(file), file).toBe(true);
                expect(filters.unpacks(file), file).toBe(false);
            }
            expect(filters.unpacks("out/main/index.js")).toBe(false);
        });

        it("carries no other platform's or architecture's binaries", () => {
            const foreign = [
                ...others.flatMap(binaryPackageFiles),
                ...TARGETS.filter((other) => other !== target).flatMap((other) => localBuildFiles(`${other.platform}-${other.arch}`))
            ];
            for (const file of foreign) {
                expect(filters.packs(file), file).toBe(false);
            }
            expect(filters.packs("node_modules/node-llama-cpp/llama/gitRelease.bundle")).toBe(false);
        });

        it("carries no llama.cpp source nor a local build's cmake tree, only what loads", () => {
            const build = `node_modules/node-llama-cpp/llama/localBuilds/${target.platform}-${target.arch}-3l192f405j2t1j`;
            for (const file of [
                "node_modules/node-llama-cpp/llama/llama.cpp/CMakeLists.txt",
                "node_modules/node-llama-cpp/llama/llama.cpp/ggml/src/ggml.c",
                `${build}/CMakeCache.txt`,
                `${build}/build.ninja`,
                `${build}/CMakeFiles/llama-addon.dir/addon/addon.cpp.o`,
                `${build}/llama.cpp/ggml/src/libggml-base.so`
            ]) {
                expect(filters.packs(file), file).toBe(false);
            }
        });
    });
});

describe("updates", () => {
    it("come from the repository's published GitHub releases, one installer per architecture by name", () => {
        expect(config.publish).toEqual([{ provider: "github", releaseType: "release" }]);
        // electron-updater picks, from a latest.yml listing both Windows builds, the file whose name has process.arch in it.
        expect(config.artifactName).toContain("${arch}");
    });
});

describe("the packaged app's engine process", () => {
    it("is built from the entry that routes node-llama-cpp's binary test through main", () => {
        expect(readText("electron.vite.config.ts")).toContain('engineProcess: resolve(root, "engine/process/appEngineProcessMain.ts")');
        expect(readText("engine/process/appEngineProcessMain.ts")).toMatch(
            /relayBindingTestsToHost\(process\.env\)[\s\S]*await import\("\.\/engineProcessMain\.js"\)/
        );
    });

    it("finds node-llama-cpp's test file where main looks for it", () => {
        const testModule = path.join(root, "node_modules/node-llama-cpp/dist/bindings/utils/testBindingBinary.js");
        expect(fs.realpathSync(nodeLlamaCppBindingTestModule() ?? "missing")).toBe(fs.realpathSync(testModule));
        expect(readText(path.relative(root, testModule))).toContain('process.env.TEST_BINDING_CP === "true"');
    });
});

describe("the installers workflow", () => {
    const workflow = readText(".github/workflows/installers.yml");
    const scripts = (JSON.parse(readText("package.json")) as { scripts: Record<string, string> }).scripts;
    // One flow mapping per job: { name, runner, dist, arch[, llama-gpu][, gpu-builds] }.
    const jobs = [
        ...workflow.matchAll(
            /- \{ name: ([\w-]+), runner: ([\w.-]+), dist: "([\w:]+)", arch: (\w+)(?:, llama-gpu: "([^"]*)")?(?:, gpu-builds: "([^"]*)")? \}/g
        )
    ].map(([, name, runner, dist, arch, llamaGpu, gpuBuilds]) => ({
        name,
        runner: runner ?? "",
        dist: dist ?? "",
        arch,
        llamaGpu: llamaGpu ?? "",
        gpuBuilds: (gpuBuilds ?? "").split(" ").filter(Boolean).sort()
    }));

    it("builds every target on a runner of its own OS and architecture", () => {
        const runnerOs: Record<BuilderPlatform, RegExp> = { linux: /^ubuntu-/, win: /^windows-/, mac: /^macos-/ };
        for (const target of TARGETS) {
            const job = jobs.find((candidate) => candidate.name === `${target.platform}-${target.arch}`);
            expect(job, `${target.platform}-${target.arch}`).toBeDefined();
            expect(job?.runner).toMatch(runnerOs[target.platform]);
            expect(job?.arch).toBe(target.arch);
            expect(scripts[job?.dist ?? ""]).toMatch(
                new RegExp(`^electron-vite build && electron-builder --config electron-builder\\.config\\.ts .*--${target.platform}( |$)`)
            );
        }
        expect(jobs).toHaveLength(TARGETS.length);
        expect(scripts.dist).toMatch(/^electron-vite build && electron-builder --config electron-builder\.config\.ts /);
        expect(workflow).toContain("runs-on: ${{ matrix.runner }}");
        expect(workflow).toContain("architecture: ${{ matrix.arch }}");
        expect(workflow).toContain("run: npm run ${{ matrix.dist }} -- --${{ matrix.arch }}");
    });

    it("builds llama.cpp's portable binary into node-llama-cpp's localBuilds after npm ci and before the installers", () => {
        expect(scripts["build-llama"]).toBe("node --import tsx engine/runtime/buildLlamaCli.ts");
        const install = workflow.indexOf("run: npm ci");
        const build = workflow.indexOf("run: npm run build-llama -- --portable ${{ matrix.llama-gpu }}");
        const installers = workflow.indexOf("run: npm run ${{ matrix.dist }}");
        expect(install).toBeGreaterThan(0);
        expect(build).toBeGreaterThan(install);
        expect(installers).toBeGreaterThan(build);
    });

    it("builds and ships one patched build per platform and backend: CUDA and Vulkan on Linux and Windows x64, Metal on macOS", () => {
        const gpuBuilds = Object.fromEntries(jobs.map((job) => [job.name, job.gpuBuilds]));
        expect(gpuBuilds).toMatchObject({ "linux-x64": ["cuda", "vulkan"], "win-x64": ["cuda", "vulkan"] });
        for (const name of ["linux-arm64", "win-arm64", "mac-arm64", "mac-x64"]) {
            expect(gpuBuilds[name], name).toEqual([]);
        }
        // Metal: the portable build of the whole of llama.cpp, patched, is macOS arm64's own build
        expect(jobs.find((job) => job.name === "mac-arm64")?.llamaGpu).toBe("--gpu metal");
        const portable = workflow.indexOf("run: npm run build-llama -- --portable ${{ matrix.llama-gpu }}");
        const gpu = workflow.indexOf("- name: Build Kvault's patched GPU builds");
        const installers = workflow.indexOf("run: npm run ${{ matrix.dist }}");
        expect(gpu).toBeGreaterThan(portable);
        expect(installers).toBeGreaterThan(gpu);
        const step = workflow.slice(gpu, workflow.indexOf("\n\n", gpu));
        expect(step).toContain("if: matrix.gpu-builds != ''");
        expect(step).toContain("for gpu in ${{ matrix.gpu-builds }}; do");
        // Linux: the patched addon alone, on the prebuilt's libraries; Windows: the whole of llama.cpp, portable (no import libraries to link against)
        expect(step).toContain('npm run build-llama -- --gpu "$gpu"');
        expect(step).toContain('npm run build-llama -- --portable --gpu "$gpu"');
        for (const sdk of ["- name: Install the Vulkan SDK", "- name: Install the CUDA toolkit"]) {
            const at = workflow.indexOf(sdk);
            expect(at, sdk).toBeGreaterThan(portable);
            expect(at, sdk).toBeLessThan(gpu);
            expect(workflow.slice(at, workflow.indexOf("\n\n", at))).toContain("if: matrix.gpu-builds != '' && runner.os == 'Windows'");
        }
        // what the builds leave in localBuilds ships, Release/ and buildDone.status, as the CPU's portable build does
        expect(readText("electron-builder.config.ts")).toContain(
            '"!node_modules/node-llama-cpp/llama/localBuilds/*/!(Release|buildDone.status){,/**/*}"'
        );
    });

    it("installs with npm ci on Node 22 (what electron 45's tooling needs) and uploads the installers, failing when there are none", () => {
        expect(workflow).toMatch(/uses: actions\/setup-node@v4\n\s+with:\n\s+node-version: 22\n\s+cache: npm\n/);
        expect(workflow).toContain("run: npm ci");
        expect(workflow).toContain("uses: actions/upload-artifact@v4");
        for (const pattern of ["release/*.AppImage", "release/*.deb", "release/*.exe", "release/*.dmg"]) {
            expect(workflow).toContain(pattern);
        }
        expect(workflow).toContain("if-no-files-found: error");
        expect(workflow).toContain("release/latest*.yml");
        expect(workflow).toContain('CSC_IDENTITY_AUTO_DISCOVERY: "false"');
        expect(workflow).not.toMatch(/secrets\./);
    });

    it("for a v* tag, publishes one release with every build and the joined update-info files, with the repository's own token", () => {
        const release = workflow.slice(workflow.indexOf("\n  release:\n"));
        expect(release).toContain("if: startsWith(github.ref, 'refs/tags/v')");
        expect(release).toContain("needs: installers");
        expect(release).toMatch(/permissions:\n\s+contents: write/);
        expect(release).toContain("uses: actions/download-artifact@v4");
        expect(release).toContain("run: node --import tsx main/updates/mergeUpdateInfoCli.ts artifacts release");
        expect(release).toContain("GH_TOKEN: ${{ github.token }}");
        expect(release).toMatch(/gh release create "\$GITHUB_REF_NAME" .*release\/\*/);
        expect(release).not.toContain("--draft");
        expect(workflow.slice(0, workflow.indexOf("\njobs:"))).toMatch(/permissions:\n\s+contents: read/);
    });
});
