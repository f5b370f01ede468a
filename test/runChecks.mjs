// The static checks of `npm test` (lint, format check, typecheck), side by side: each is one
// process on one core, and on a 2-core machine the three took 59 s one after another against about
// 35 at once (docs/TESTING.md). Each check's output is printed whole when it ends, in this order;
// the exit status is 1 when any failed, naming which.
import { spawn } from "node:child_process";

const checks = ["lint", "format:check", "typecheck"];
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Runs `npm run <name>`, its stdout and stderr kept together in the order they came. */
function run(name) {
    const started = Date.now();
    return new Promise((resolve) => {
        const child = spawn(npm, ["run", "--silent", name], { stdio: ["ignore", "pipe", "pipe"], shell: process.platform === "win32" });
        const output = [];
        child.stdout.on("data", (chunk) => output.push(chunk));
        child.stderr.on("data", (chunk) => output.push(chunk));
        child.on("error", (error) => output.push(Buffer.from(`${error.message}\n`)));
        child.on("close", (code, signal) =>
            resolve({
                name,
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
        `\n> npm run ${result.name}: ${result.ok ? "passed" : `failed (${result.how})`} in ${result.seconds.toFixed(1)} s\n`
    );
    process.stdout.write(result.output);
}
const failed = results.filter((result) => !result.ok).map((result) => result.name);
if (failed.length > 0) {
    process.stderr.write(`\nStatic checks failed: ${failed.join(", ")}.\n`);
    process.exit(1);
}
