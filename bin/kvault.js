#!/usr/bin/env node
// The `kvault` command (package.json's bin; the desktop app puts it on the PATH). Plain JavaScript
// that node runs. Installed (no devDependencies), it runs the built command, out/main/cli.js from
// `npm run build`; in a development checkout, where tsx is there, the sources themselves, so what
// runs is what they say without a build.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const built = path.join(repositoryRoot, "out", "main", "cli.js");
const source = path.join(repositoryRoot, "host", "cli", "cliMain.ts");

async function developmentLoader() {
    if (!fs.existsSync(source)) {
        return undefined;
    }
    try {
        return await import("tsx/esm/api");
    } catch {
        return undefined;
    }
}

const tsx = await developmentLoader();
if (tsx !== undefined) {
    tsx.register();
    await import(pathToFileURL(source).href);
} else if (fs.existsSync(built)) {
    await import(pathToFileURL(built).href);
} else {
    process.stderr.write(`kvault is not built: ${built} is missing. Run \`npm run build\`, then kvault again.\n`);
    process.exit(2);
}
