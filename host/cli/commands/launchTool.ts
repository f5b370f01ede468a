import { spawn } from "node:child_process";
import crypto from "node:crypto";
import { CliError } from "../CliError.js";
import { exitCodes, type ExitCode } from "../exitCodes.js";
import type { KvaultClient } from "../KvaultClient.js";
import { openKvaultRpc } from "../openKvaultRpc.js";
import { LAUNCH_MIN_WINDOW_TOKENS, launchPlan, type LaunchTool } from "../launchTargets.js";
import { findModel } from "./findModel.js";

export interface LaunchOptions {
    readonly tool: LaunchTool;
    /** The model the tool asks for; the server's loaded model when absent. */
    readonly model: string | undefined;
    /** Start the tool even though the model's window is under LAUNCH_MIN_WINDOW_TOKENS (said, not silent). */
    readonly allowSmallWindow: boolean;
    readonly toolArgs: readonly string[];
    readonly status: NodeJS.WritableStream;
    readonly env: NodeJS.ProcessEnv;
}

/**
 * `kvault launch claude|codex|opencode`: starts the coding tool against this Kvault with a key of
 * its own (made through the host's RPC, so its workspaces live in their own namespace, and revoked
 * when the tool ends) and the environment and arguments that tool reads (launchTargets.ts). The
 * model's window is checked first: these tools need at least LAUNCH_MIN_WINDOW_TOKENS. The tool's
 * exit code is the command's.
 */
export async function launchTool(client: KvaultClient, options: LaunchOptions): Promise<ExitCode | number> {
    const model = await findModel(client, options.model);
    const window = model.max_model_len ?? 0;
    if (window < LAUNCH_MIN_WINDOW_TOKENS) {
        const message =
            `${model.id} is served with a window of ${window.toLocaleString("en-US")} tokens; ${options.tool} needs at least ` +
            `${LAUNCH_MIN_WINDOW_TOKENS.toLocaleString("en-US")} (its system prompt and tools alone take tens of thousands). ` +
            `Restart the server with \`kvault serve --context ${LAUNCH_MIN_WINDOW_TOKENS}\` (and a model trained for it)`;
        if (!options.allowSmallWindow) {
            throw new CliError(`${message}, or give --allow-small-window to start it anyway.`, "window_too_small", exitCodes.refused);
        }
        options.status.write(`Warning: ${message}. Starting anyway (--allow-small-window).\n`);
    }
    const rpc = await openKvaultRpc(client);
    const keyId = `launch-${options.tool}-${crypto.randomBytes(3).toString("hex")}`;
    try {
        const { key } = await rpc.call("createApiKey", { id: keyId });
        const plan = launchPlan({ tool: options.tool, baseUrl: client.baseUrl, apiKey: key, model: model.id, toolArgs: options.toolArgs });
        options.status.write(
            `Starting ${plan.command} on ${model.id} at ${client.baseUrl} with the key "${keyId}" (revoked when it ends).\n`
        );
        return await new Promise<number>((resolve, reject) => {
            const child = spawn(plan.command, plan.args, { stdio: "inherit", env: { ...options.env, ...plan.env } });
            // the tool owns the terminal: Ctrl-C is its to handle, and kvault waits for it to end
            const ignoreInterrupt = (): void => undefined;
            process.on("SIGINT", ignoreInterrupt);
            child.once("error", (error: NodeJS.ErrnoException) => {
                process.off("SIGINT", ignoreInterrupt);
                reject(
                    error.code === "ENOENT"
                        ? new CliError(`${plan.command} is not on the PATH. ${installHint(options.tool)}`, "tool_not_found")
                        : new CliError(`${plan.command} could not start: ${error.message}`, "tool_failed")
                );
            });
            child.once("exit", (code, signal) => {
                process.off("SIGINT", ignoreInterrupt);
                resolve(code ?? (signal === "SIGINT" ? exitCodes.interrupted : exitCodes.failed));
            });
        });
    } finally {
        await rpc.call("revokeApiKey", { id: keyId }).catch(() => undefined);
        rpc.dispose();
    }
}

function installHint(tool: LaunchTool): string {
    switch (tool) {
        case "claude":
            return "Install Claude Code: npm install -g @anthropic-ai/claude-code";
        case "codex":
            return "Install Codex: npm install -g @openai/codex";
        case "opencode":
            return "Install opencode: npm install -g opencode-ai";
    }
}
