// `npm start`'s prestart step (package.json): makes sure Electron's binary is there before
// electron-vite starts, downloading it once if it is missing, and otherwise stops with what is
// missing and how to fix it. Runs in Node, never in Electron.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { ensureElectronBinary } from "./electronBinary.js";
import { checkNodeVersion } from "./nodeVersion.js";

const nodeProblem = checkNodeVersion(process.versions.node);
if (nodeProblem !== undefined) {
    // A warning, not a stop: the app runs on Electron's own Node; the tooling around it is what needs the newer one.
    process.stderr.write(`${nodeProblem}\n`);
}

let electronPackageDir: string;
try {
    electronPackageDir = path.dirname(createRequire(import.meta.url).resolve("electron/package.json"));
} catch {
    process.stderr.write("Kvault cannot start the desktop app: the electron package is not installed. Run `npm ci` first.\n");
    process.exit(1);
}

const result = ensureElectronBinary({
    electronPackageDir,
    // The electron package's own installer, as its index.js runs it on first use.
    download: () => {
        process.stderr.write("Electron's binary is missing; downloading it (about 100 MB) …\n");
        return spawnSync(process.execPath, [path.join(electronPackageDir, "install.js")], { stdio: "inherit" }).status === 0;
    }
});
if (!result.ok) {
    process.stderr.write(`\n${result.message}\n\n`);
    process.exit(1);
}
