import { Command, CommanderError, Option } from "commander";
import { RpcError } from "../../contract/rpcClient/index.js";
import { CliError } from "./CliError.js";
import { listModels } from "./commands/listModels.js";
import { launchTool } from "./commands/launchTool.js";
import { pullModel } from "./commands/pullModel.js";
import { runChat } from "./commands/runChat.js";
import { showLoaded } from "./commands/showLoaded.js";
import { exitCodes } from "./exitCodes.js";
import { KvaultClient } from "./KvaultClient.js";
import { isLaunchTool, launchTools } from "./launchTargets.js";
import { runEntry } from "./runEntry.js";

/** The server the client commands talk to when neither --url nor KVAULT_URL says: `kvault serve`'s default address. */
export const DEFAULT_SERVER_URL = "http://127.0.0.1:8080";

export interface CliIo {
    readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
    readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
    readonly stderr: NodeJS.WritableStream;
    readonly env: NodeJS.ProcessEnv;
}

/**
 * The `kvault` command: `serve` and `probe` run those programs; `run`, `ls`, `ps`, `pull` and
 * `launch` talk to a running Kvault over its API. Resolves with the exit code (exitCodes.ts);
 * `serve` resolves only when its server is up, and the process lives on with it.
 */
export async function runKvaultCli(argv: readonly string[], io: CliIo): Promise<number> {
    let exitCode: number = exitCodes.ok;
    const program = new Command("kvault")
        .description("Kvault: local language models in isolated workspaces, from the terminal.")
        .exitOverride()
        .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
        .showHelpAfterError("(kvault --help lists the commands)");
    const serverOptions = (command: Command): Command =>
        command
            .addOption(new Option("--url <url>", "the Kvault server's address").env("KVAULT_URL").default(DEFAULT_SERVER_URL))
            .addOption(new Option("--api-key <key>", "its API key (kvault serve prints it)").env("KVAULT_API_KEY"));
    const clientOf = (options: { url: string; apiKey?: string }): KvaultClient =>
        new KvaultClient({ url: options.url, apiKey: options.apiKey });

    program
        .command("serve")
        .description("start the headless server: the API, the browser app and the engine (kvault serve --help lists its options)")
        .helpOption(false)
        .allowUnknownOption()
        .allowExcessArguments()
        .argument("[options...]")
        .action(async (args: string[]) => runEntry("serve", args));

    program
        .command("probe")
        .description("probe an OpenAI-compatible endpoint for KV leaks between users (kvault probe --help lists its options)")
        .helpOption(false)
        .allowUnknownOption()
        .allowExcessArguments()
        .argument("[options...]")
        .action(async (args: string[]) => runEntry("probe", args));

    serverOptions(
        program
            .command("run")
            .description("chat with a model in the terminal; with a prompt (or piped text), answer once")
            .argument("<model>", "the model, as `kvault ls` names it")
            .argument("[prompt...]", "a message to answer once")
            .option("--workspace <name>", "the workspace to chat in (default: a new one)")
            .option("--system <text>", "a system prompt")
            .option("--max-tokens <n>", "the most tokens of an answer", positiveInteger)
            .option("--temperature <t>", "sampling temperature", nonNegativeNumber)
    ).action(async (model: string, prompt: string[], options) => {
        exitCode = await runChat(clientOf(options), {
            model,
            prompt,
            workspace: options.workspace,
            system: options.system,
            maxTokens: options.maxTokens,
            temperature: options.temperature,
            input: io.stdin,
            output: io.stdout,
            status: io.stderr
        });
    });

    serverOptions(
        program.command("ls").description("list the models the server answers with").option("--json", "the API's list as JSON")
    ).action(async (options) => {
        exitCode = await listModels(clientOf(options), { json: options.json === true, output: io.stdout });
    });

    serverOptions(
        program
            .command("ps")
            .description("show what is loaded: models, where they run, KV pages and capacities")
            .option("--json", "as JSON")
    ).action(async (options) => {
        exitCode = await showLoaded(clientOf(options), { json: options.json === true, output: io.stdout });
    });

    serverOptions(
        program
            .command("pull")
            .description(
                "download a model into the server's library: a catalogue id (qwen3-0.6b[:Q8_0]), hf:owner/repo:QUANT or a URL; resumes a stopped one"
            )
            .argument("<source>")
    ).action(async (source: string, options) => {
        const interrupted = new AbortController();
        const onInterrupt = (): void => interrupted.abort();
        process.once("SIGINT", onInterrupt);
        try {
            exitCode = await pullModel(clientOf(options), { source, output: io.stdout, signal: interrupted.signal });
        } finally {
            process.off("SIGINT", onInterrupt);
        }
    });

    serverOptions(
        program
            .command("launch")
            .description(
                `start a coding agent (${launchTools.join(", ")}) against this Kvault, with a key of its own; arguments after -- go to it`
            )
            .argument("<tool>", launchTools.join(" | "))
            .argument("[toolArgs...]")
            .option("--model <id>", "the model it uses (default: the server's loaded model)")
            .option("--allow-small-window", "start it even when the model's window is under 64k tokens")
    ).action(async (tool: string, toolArgs: string[], options) => {
        if (!isLaunchTool(tool)) {
            throw new CliError(
                `kvault launch starts ${launchTools.join(", ")}, not ${JSON.stringify(tool)}.`,
                "tool_unknown",
                exitCodes.usage
            );
        }
        exitCode = await launchTool(clientOf(options), {
            tool,
            model: options.model,
            allowSmallWindow: options.allowSmallWindow === true,
            toolArgs,
            status: io.stderr,
            env: io.env
        });
    });

    try {
        await program.parseAsync([...argv], { from: "user" });
        return exitCode;
    } catch (error) {
        if (error instanceof CommanderError) {
            // --help and --version end here with 0; every other commander error is a usage mistake it already printed
            return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
        }
        if (error instanceof CliError) {
            io.stderr.write(`kvault: ${error.message}\n`);
            return error.exitCode;
        }
        // A call to the host's RPC that failed (pull, launch): the host's message already says what to do.
        if (error instanceof RpcError) {
            io.stderr.write(`kvault: ${error.message}\n`);
            return exitCodes.failed;
        }
        throw error;
    }
}

function positiveInteger(text: string): number {
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) {
        throw new CliError(`${JSON.stringify(text)} is not a whole number of 1 or more.`, "invalid_option", exitCodes.usage);
    }
    return value;
}

function nonNegativeNumber(text: string): number {
    const value = Number(text);
    if (!Number.isFinite(value) || value < 0) {
        throw new CliError(`${JSON.stringify(text)} is not a number of 0 or more.`, "invalid_option", exitCodes.usage);
    }
    return value;
}
