// The installers: AppImage and deb for Linux, NSIS for Windows, DMG for macOS, each for x64 and
// arm64. electron-builder loads this file (`--config electron-builder.config.ts`, through jiti);
// test/unit/installers/builderConfig.test.ts checks it against electron-builder's own matchers,
// because where Electron's binary cannot be downloaded nothing can actually be packaged.
import { Arch, type AfterPackContext, type Configuration } from "electron-builder";

/**
 * The architectures Kvault ships, each built on a machine of its own architecture (the CI matrix):
 * npm installs only the native packages of the machine it runs on, so an arm64 build made on x64
 * would lack @node-rs/xxhash's arm64 binary. That is why no target below names an architecture:
 * electron-builder then builds this machine's, or the one given as `--x64` or `--arm64`.
 */
export const INSTALLER_ARCHS = ["x64", "arm64"] as const;

/**
 * Stops a build for another platform or architecture than this machine's (electron-builder's
 * beforePack hook), which would package native packages that cannot load there.
 */
export function refuseForeignBuild({ electronPlatformName, arch }: Pick<AfterPackContext, "electronPlatformName" | "arch">): void {
    const target = `${electronPlatformName}-${Arch[arch]}`;
    const machine = `${process.platform}-${process.arch}`;
    if (target !== machine) {
        throw new Error(
            `This ${machine} machine cannot build the ${target} installer: npm installed only this machine's ` +
                `native packages (@node-rs/xxhash among them), so that app would not start. Build it on a ${target} machine, ` +
                "as the Installers workflow does."
        );
    }
}

/**
 * One node-llama-cpp binary package (or bins/ or llama/localBuilds/ folder) per target and its
 * GPU flavours: `linux-x64` also matches `linux-x64-cuda`, `linux-x64-cuda-ext` and
 * `linux-x64-vulkan`; `mac-arm64` matches `mac-arm64-metal`. electron-builder expands `${os}` to
 * linux, win or mac and `${arch}` to x64 or arm64 for each build, the names node-llama-cpp uses.
 */
const THIS_TARGET = "${os}-${arch}*";

/**
 * Where node-llama-cpp keeps native code: the @node-llama-cpp/* prebuilt binary packages (the
 * fallback that always loads), its own bins/ (where older versions kept them) and llama/localBuilds/
 * (what `npm run build-llama` leaves, which the engine prefers: the Installers workflow builds the
 * portable flavour there per platform). node-llama-cpp's Electron template names the same three.
 */
const NATIVE_DIRS = [
    "node_modules/@node-llama-cpp",
    "node_modules/node-llama-cpp/bins",
    "node_modules/node-llama-cpp/llama/localBuilds"
] as const;

const config: Configuration = {
    appId: "app.kvault.desktop",
    productName: "Kvault",
    // Distinct per platform and architecture, so the CI artifacts never overwrite one another.
    artifactName: "${productName}-${version}-${os}-${arch}.${ext}",
    // Written only into the packaged package.json: development runs keep Electron's defaults.
    extraMetadata: { desktopName: "kvault.desktop" },
    directories: {
        output: "release",
        buildResources: "resources"
    },
    // electron-builder adds the production dependencies by itself, filtered by this same list:
    // each build drops every native folder, whole, that is not for its own target.
    files: [
        "out/**/*",
        "package.json",
        ...NATIVE_DIRS.map((dir) => `!${dir}/!(${THIS_TARGET}){,/**/*}`),
        // Only used to compile llama.cpp from source, which the app never does (build: "never"): the
        // bundle (34 MB), the source `npm run build-llama` clones from it (200 MB), and a local build's
        // cmake tree beside its Release/ folder (what loads) and buildDone.status (what marks it done).
        "!node_modules/node-llama-cpp/llama/gitRelease.bundle",
        "!node_modules/node-llama-cpp/llama/llama.cpp{,/**/*}",
        "!node_modules/node-llama-cpp/llama/localBuilds/*/!(Release|buildDone.status){,/**/*}"
    ],
    // Native libraries must be real files: node-llama-cpp maps app.asar/ to app.asar.unpacked/
    // before loading its addon, and the addon loads its sibling .so/.dll/.dylib files by path.
    asarUnpack: [...NATIVE_DIRS.map((dir) => `${dir}/**/*`), "node_modules/@node-rs/xxhash-*/**/*"],
    beforePack: refuseForeignBuild,
    // Where Help › Check for Updates… looks (main/updates/): the GitHub releases the Installers
    // workflow publishes for a v* tag, published rather than drafts, because electron-updater skips
    // drafts. Owner and repository come from the checkout's origin remote; where there is none,
    // electron-builder warns and the app is built without update information (the check says so).
    // Every build writes its latest*.yml here even with --publish never; the release job uploads them.
    publish: [{ provider: "github", releaseType: "release" }],
    // Every native dependency ships prebuilt N-API binaries (node-llama-cpp, @node-rs/xxhash):
    // there is nothing to rebuild against Electron's headers.
    npmRebuild: false,
    electronFuses: {
        // Off: nothing may run this binary as plain Node. The engine runs in a utilityProcess, which
        // does not need ELECTRON_RUN_AS_NODE; node-llama-cpp's binary test, which would fork with it
        // from there, is forked by main as a utilityProcess instead (main/engine/BindingTestRelay.ts).
        runAsNode: false,
        enableNodeOptionsEnvironmentVariable: false,
        enableNodeCliInspectArguments: false,
        // Validated on macOS and Windows (Electron ≥ 30); electron-builder embeds the hash.
        enableEmbeddedAsarIntegrityValidation: true,
        onlyLoadAppFromAsar: true
        // enableCookieEncryption stays off: Kvault keeps no cookies, and the fuse would ask the
        // keychain for a key at start-up (a prompt on every new ad-hoc signature).
        // grantFileProtocolExtraPrivileges stays on: the renderer's ES modules load over file://.
    },
    linux: {
        target: ["AppImage", "deb"],
        executableName: "kvault",
        // Electron names its windows after desktopName (Wayland app_id, X11 WM_CLASS); the same
        // name for the .desktop file lets the desktop match running windows to the launcher.
        syncDesktopName: true,
        category: "Utility",
        synopsis: "Local language models in isolated chat workspaces",
        // A deb needs a maintainer; its homepage comes from the GitHub remote (see docs/development.md, Installers).
        maintainer: "Kvault contributors"
    },
    win: {
        target: ["nsis"]
    },
    nsis: {
        oneClick: true,
        perMachine: false
    },
    mac: {
        target: ["dmg"],
        category: "public.app-category.developer-tools",
        // Ad-hoc signature, made after the fuses are flipped: without one an arm64 Mac refuses the
        // app as damaged. Replace with a Developer ID identity to sign and notarize.
        identity: "-",
        hardenedRuntime: true,
        // The inherit file covers the helpers, the engine's utilityProcess among them: that is
        // where node-llama-cpp's ad-hoc signed dylibs load and its Metal code runs.
        entitlements: "resources/entitlements.mac.plist",
        entitlementsInherit: "resources/entitlements.mac.plist"
    }
};

export default config;
