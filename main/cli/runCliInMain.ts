import { app } from "electron";
import { runKvaultCli } from "../../host/cli/kvaultCli.js";
import { exitCodes } from "../../host/cli/exitCodes.js";

/**
 * Runs a `kvault` command in the app's main process, without a window, and exits with its code.
 * `serve` is refused: the headless server forks its engine with child_process, which the app's
 * RunAsNode fuse forbids; the app serves the same API itself (Settings, Local API), and `kvault
 * serve` runs from an npm install. Never resolves: the process ends here.
 */
export async function runCliInMain(args: readonly string[]): Promise<never> {
    let code: number;
    if (args[0] === "serve") {
        process.stderr.write(
            "kvault: `kvault serve` runs the headless server from an npm install of Kvault (npm install -g, then kvault serve). " +
                "The desktop app serves the same API itself: turn on Settings › Local API, and the other kvault commands talk to it with --url.\n"
        );
        code = exitCodes.usage;
    } else {
        try {
            code = await runKvaultCli(args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });
        } catch (error) {
            process.stderr.write(`kvault: ${error instanceof Error ? error.message : String(error)}\n`);
            code = exitCodes.failed;
        }
    }
    app.exit(code);
    return await new Promise<never>(() => undefined);
}
