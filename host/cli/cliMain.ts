// The `kvault` command's process: bin/kvault.js starts this (built to out/main/cli.js).
import { runKvaultCli } from "./kvaultCli.js";

const args = process.argv.slice(2);
const code = await runKvaultCli(args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });
if (args[0] === "serve" || args[0] === "probe") {
    // that program owns the process now: its server, its exit code
    process.exitCode ??= code;
} else {
    // a client command is done: end now, once stdout has taken the last line, rather than when fetch's idle sockets close
    process.stdout.write("", () => process.exit(code));
}
