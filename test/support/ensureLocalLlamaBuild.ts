import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { findLocalBuilds } from "../../engine/runtime/localLlamaBuild.js";

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
/** A build takes about 5 minutes on 2 cores; past this something is wrong. */
const BUILD_TIMEOUT_MS = 30 * 60 * 1000;

/**
 * The native local build `npm run build-llama` makes (Kvault's patched addon: a thread per context,
 * states through memory), made once before any test: it is what the engine prefers, so the tests
 * run what a user who built it runs. Tests of node-llama-cpp's prebuilt ask for it by name
 * (`preferLocalBuild: false`, `llamaBinary: "prebuilt"`).
 */
export function ensureLocalLlamaBuild(): void {
    if (findLocalBuilds().some((build) => build.flavor === "native" && build.gpu === false)) {
        return;
    }
    runBuildLlama([]);
}

/**
 * The patched build of a GPU backend (`npm run build-llama -- --gpu X`: Kvault's addon alone, on the
 * prebuilt X libraries), which the engine prefers over the prebuilt on that backend, made once
 * before the gpu project's tests so that they run what a user who built it runs.
 */
export function ensurePatchedPrebuiltBuild(gpu: "vulkan"): void {
    if (findLocalBuilds().some((build) => build.flavor === "patched-prebuilt" && build.gpu === gpu)) {
        return;
    }
    runBuildLlama(["--gpu", gpu]);
}

function runBuildLlama(args: readonly string[]): void {
    const result = spawnSync(process.execPath, ["--import", "tsx", path.join("engine", "runtime", "buildLlamaCli.ts"), ...args], {
        cwd: repositoryRoot,
        stdio: "inherit",
        timeout: BUILD_TIMEOUT_MS
    });
    if (result.status !== 0) {
        throw new Error(
            `npm run build-llama ${args.join(" ")} ended with ${result.error?.message ?? `exit code ${result.status}, signal ${result.signal}`}; ` +
                "the model and gpu tests need its local build (cmake, ninja and a C++ compiler)."
        );
    }
}
