// A copy of Kvault as `npm ci --omit=dev` after `npm run build` leaves it: the build (electron-vite,
// into the copy's out/), package.json, the plain JavaScript its scripts run, and a node_modules of
// the production packages alone (links into this checkout's, as package-lock.json lists them without
// the dev ones). tsx, vite and electron-vite cannot be resolved from it.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { repositoryRoot } from "../support/generatedModels.js";

/** The files package.json's serve and postinstall scripts run with node alone, besides the build. */
export const plainScriptFiles = [
    "host/headless/startBuiltServer.js",
    "bin/kvault.js",
    "engine/runtime/speculationFix/fixSpeculativeValidationCli.js",
    "engine/runtime/speculationFix/speculativeValidation.js"
] as const;

/** How long the three bundles may take to build on a loaded machine. */
const BUILD_TIMEOUT_MS = 240_000;

interface LockFile {
    readonly packages: Readonly<Record<string, { readonly dev?: boolean }>>;
}

export async function makeProductionCopy(directory: string): Promise<void> {
    const electronVite = path.join(repositoryRoot, "node_modules", "electron-vite", "bin", "electron-vite.js");
    await promisify(execFile)(process.execPath, [electronVite, "build", "--logLevel", "warn", "--outDir", path.join(directory, "out")], {
        cwd: repositoryRoot,
        timeout: BUILD_TIMEOUT_MS,
        env: { ...process.env, NODE_OPTIONS: undefined }
    });
    for (const file of ["package.json", ...plainScriptFiles]) {
        fs.mkdirSync(path.dirname(path.join(directory, file)), { recursive: true });
        fs.copyFileSync(path.join(repositoryRoot, file), path.join(directory, file));
    }
    const lock = JSON.parse(fs.readFileSync(path.join(repositoryRoot, "package-lock.json"), "utf8")) as LockFile;
    for (const [key, entry] of Object.entries(lock.packages)) {
        // top-level packages only: a nested one comes along inside its parent's folder
        const installed = path.join(repositoryRoot, key);
        if (!key.startsWith("node_modules/") || key.slice("node_modules/".length).includes("node_modules/") || entry.dev === true) {
            continue;
        }
        if (!fs.existsSync(installed)) {
            continue; // another platform's optional package
        }
        fs.mkdirSync(path.dirname(path.join(directory, key)), { recursive: true });
        fs.symlinkSync(installed, path.join(directory, key), "dir");
    }
}
