import crypto from "node:crypto";
import readline from "node:readline";
import { CliError } from "../CliError.js";
import { exitCodes, type ExitCode } from "../exitCodes.js";
import type { KvaultClient } from "../KvaultClient.js";
import { readServerSentEvents } from "../readServerSentEvents.js";
import { readPipedPrompt } from "../readPipedPrompt.js";
import { findModel } from "./findModel.js";

export interface RunChatOptions {
    readonly model: string;
    /** Words given after the model: one turn, answered, then the command ends. */
    readonly prompt: readonly string[];
    /** The workspace the chat runs in (the API's `user`); a new one for each run by default. */
    readonly workspace: string | undefined;
    readonly system: string | undefined;
    readonly maxTokens: number | undefined;
    readonly temperature: number | undefined;
    readonly input: NodeJS.ReadableStream & { isTTY?: boolean };
    readonly output: NodeJS.WritableStream;
    /** Where the meter's line and notices go, so that the answer alone can be piped. */
    readonly status: NodeJS.WritableStream;
}

type Message = { readonly role: "system" | "user" | "assistant"; readonly content: string };

interface TurnOutcome {
    readonly text: string;
    readonly usage: { readonly prompt_tokens: number; readonly completion_tokens: number } | undefined;
    readonly finishReason: string | undefined;
}

/**
 * `kvault run MODEL [PROMPT…]`: a chat in the terminal against a running Kvault, each answer
 * streamed as it is written and followed by the meter's numbers (the tokens the chat holds of
 * the window), as the app's meter shows them. With a prompt, or text piped in, one turn; else a
 * conversation until /bye or Ctrl-D, where Ctrl-C stops the answer being written.
 */
export async function runChat(client: KvaultClient, options: RunChatOptions): Promise<ExitCode> {
    const model = await findModel(client, options.model);
    const window = model.max_model_len;
    const workspace = options.workspace ?? `kvault-run-${crypto.randomBytes(4).toString("hex")}`;
    const messages: Message[] = options.system === undefined ? [] : [{ role: "system", content: options.system }];
    const meter = (outcome: TurnOutcome): void => {
        if (outcome.usage !== undefined) {
            options.status.write(`${meterLine(outcome.usage.prompt_tokens + outcome.usage.completion_tokens, window)}\n`);
        }
        if (outcome.finishReason === "length") {
            options.status.write("(the answer reached its token limit)\n");
        }
    };

    const given = options.prompt.join(" ").trim();
    const piped = given === "" && options.input.isTTY !== true ? (await readPipedPrompt(options.input)).trim() : "";
    if (given !== "" || piped !== "") {
        messages.push({ role: "user", content: given !== "" ? given : piped });
        const outcome = await streamTurn(client, { ...options, model: model.id, workspace, messages }, undefined);
        options.output.write("\n");
        meter(outcome);
        return exitCodes.ok;
    }

    options.status.write(`Chatting with ${model.id} in workspace ${workspace}. /bye or Ctrl-D ends, Ctrl-C stops an answer.\n`);
    const lines = readline.createInterface({
        input: options.input,
        output: options.output,
        prompt: ">>> ",
        terminal: options.input.isTTY === true
    });
    let answering: AbortController | undefined;
    lines.on("SIGINT", () => {
        if (answering !== undefined) {
            answering.abort();
        } else {
            options.status.write("\nUse Ctrl-D or /bye to leave.\n");
            lines.prompt();
        }
    });
    lines.prompt();
    for await (const line of lines) {
        const text = line.trim();
        if (text === "/bye") {
            break;
        }
        if (text === "") {
            lines.prompt();
            continue;
        }
        messages.push({ role: "user", content: text });
        answering = new AbortController();
        try {
            const outcome = await streamTurn(client, { ...options, model: model.id, workspace, messages }, answering.signal);
            messages.push({ role: "assistant", content: outcome.text });
            options.output.write("\n");
            meter(outcome);
        } catch (error) {
            messages.pop();
            if (!answering.signal.aborted) {
                throw error;
            }
            options.status.write("\n(stopped)\n");
        } finally {
            answering = undefined;
        }
        lines.prompt();
    }
    lines.close();
    return exitCodes.ok;
}

/** "312 of 4,096 tokens in this chat's context (8%)": what the chat holds of the window after the turn. */
export function meterLine(tokens: number, window: number | undefined): string {
    if (window === undefined || window <= 0) {
        return `[${tokens.toLocaleString("en-US")} tokens in this chat's context]`;
    }
    const percent = Math.round((tokens / window) * 100);
    return `[${tokens.toLocaleString("en-US")} of ${window.toLocaleString("en-US")} tokens in this chat's context (${percent}%)]`;
}

async function streamTurn(
    client: KvaultClient,
    turn: Pick<RunChatOptions, "maxTokens" | "temperature" | "output"> & { model: string; workspace: string; messages: readonly Message[] },
    signal: AbortSignal | undefined
): Promise<TurnOutcome> {
    const response = await client.fetch("/v1/chat/completions", {
        method: "POST",
        headers: { "content-type": "application/json" },
        signal,
        body: JSON.stringify({
            model: turn.model,
            messages: turn.messages,
            user: turn.workspace,
            stream: true,
            stream_options: { include_usage: true },
            ...(turn.maxTokens === undefined ? {} : { max_tokens: turn.maxTokens }),
            ...(turn.temperature === undefined ? {} : { temperature: turn.temperature })
        })
    });
    let text = "";
    let usage: TurnOutcome["usage"];
    let finishReason: string | undefined;
    for await (const data of readServerSentEvents(response.body!)) {
        const chunk = JSON.parse(data) as {
            choices?: { delta?: { content?: string | null }; finish_reason?: string | null }[];
            usage?: TurnOutcome["usage"] | null;
            error?: { message?: string };
        };
        if (chunk.error !== undefined) {
            throw new CliError(`The answer failed: ${chunk.error.message ?? "Kvault gave no reason"}`, "turn_failed");
        }
        const choice = chunk.choices?.[0];
        const piece = choice?.delta?.content ?? "";
        if (piece !== "") {
            text += piece;
            turn.output.write(piece);
        }
        finishReason = choice?.finish_reason ?? finishReason;
        usage = chunk.usage ?? usage;
    }
    return { text, usage, finishReason };
}
