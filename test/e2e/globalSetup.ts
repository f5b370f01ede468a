import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ensureLlamaServer } from "../bench/peer/llamaServerBinary.js";
import { ensureLocalLlamaBuild } from "../support/ensureLocalLlamaBuild.js";
import { chromiumPath } from "./support/openKvault.js";
import { repositoryRoot } from "./support/startKvaultServer.js";

// The browser tests drive the built renderer (out/renderer) that the built headless server
// (out/main/serve.js) serves: build both once per run, before any test starts a server. A
// workspace on a remote backend runs against a real llama-server, built once (cached under
// .cache/) by the first project that needs it.
export default function setup(): void {
    if (!fs.existsSync(chromiumPath)) {
        throw new Error(
            `No Chromium at ${chromiumPath}. Install Debian's (apt-get install -y chromium) or set KVAULT_CHROMIUM to a Chromium binary.`
        );
    }
    execFileSync("npx", ["electron-vite", "build", "--logLevel", "warn"], { cwd: repositoryRoot, stdio: "inherit" });
    for (const built of [path.join("out", "renderer", "index.html"), path.join("out", "main", "serve.js")]) {
        if (!fs.existsSync(path.join(repositoryRoot, built))) {
            throw new Error(`electron-vite build did not write ${built}.`);
        }
    }
    ensureLlamaServer();
    ensureLocalLlamaBuild(); // the engine the headless server starts prefers it, as in the model tests
}
