// The static checks of `npm test` (lint, the format check, the typecheck of each tsconfig), side by
// side, each with its tool's own cache outside the checkout, so that a clean clone of a tree checked
// before is checked in seconds. Each cache is keyed by file contents (ESLint's and Prettier's
// `--cache-strategy content`, tsc's build info), kept per checkout path (the tools record paths), under
// ~/.cache/kvault/checks/; KVAULT_CHECKS_CACHE=off checks every file from scratch. Each check's output
// is printed whole when it ends; the exit status is 1 when any failed, naming which.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const cacheSetting = process.env.KVAULT_CHECKS_CACHE;
const cacheDirectory =
    cacheSetting === "off"
        ? undefined
        : path.join(
              cacheSetting ?? path.join(os.homedir(), ".cache", "kvault", "checks"),
              crypto.createHash("sha256").update(process.cwd()).digest("hex").slice(0, 16)
          );
if (cacheDirectory !== undefined) {
    fs.mkdirSync(cacheDirectory, { recursive: true });
}
const cached = (file) => (cacheDirectory === undefined ? undefined : path.join(cacheDirectory, file));

/** ESLint's and Prettier's cache, keyed by each file's content (their default is its modification time, new in every clone). */
const contentCache = (at) => ["--cache", "--cache-strategy", "content", "--cache-location", at];
/** tsc's build info: what it checked, by each file's content. */
const buildInfo = (at) => ["--tsBuildInfoFile", at];

/** Each check: its npm script, and the arguments that give it a cache where there is one. */
const checks = [
    { script: "lint", cacheArgs: contentCache, cacheFile: "eslint.cache" },
    { script: "format:check", cacheArgs: contentCache, cacheFile: "prettier.cache" },
    { script: "typecheck:node", cacheArgs: buildInfo, cacheFile: "node.tsbuildinfo" },
    { script: "typecheck:web", cacheArgs: buildInfo, cacheFile: "web.tsbuildinfo" }
];
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Runs `npm run <script> -- <args>`, its stdout and stderr kept together in the order they came. */
function run({ script, cacheArgs, cacheFile }) {
    const started = Date.now();
    const cacheAt = cached(cacheFile);
    const args = ["run", "--silent", script, ...(cacheAt === undefined ? [] : ["--", ...cacheArgs(cacheAt)])];
    return new Promise((resolve) => {
        const child = spawn(npm, args, { stdio: ["ignore", "pipe", "pipe"], shell: process.platform === "win32" });
        const output = [];
        child.stdout.on("data", (chunk) => output.push(chunk));
        child.stderr.on("data", (chunk) => output.push(chunk));
        child.on("error", (error) => output.push(Buffer.from(`${error.message}\n`)));
        child.on("close", (code, signal) =>
            resolve({
                script,
                ok: code === 0,
                how: signal ?? `exit code ${code}`,
                seconds: (Date.now() - started) / 1000,
                output: Buffer.concat(output)
            })
        );
    });
}

const results = await Promise.all(checks.map(run));
for (const result of results) {
    process.stdout.write(
        `\n> npm run ${result.script}: ${result.ok ? "passed" : `failed (${result.how})`} in ${result.seconds.toFixed(1)} s\n`
    );
    process.stdout.write(result.output);
}
process.stdout.write(`\nCaches of the checks: ${cacheDirectory ?? "none (KVAULT_CHECKS_CACHE=off)"}\n`);
const failed = results.filter((result) => !result.ok).map((result) => result.script);
if (failed.length > 0) {
    process.stderr.write(`\nStatic checks failed: ${failed.join(", ")}.\n`);
    process.exit(1);
}
