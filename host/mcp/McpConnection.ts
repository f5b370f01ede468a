// One MCP server of mcp.json, connected with the official SDK's Client over stdio (its command,
// run as a child process) or streamable HTTP. It lists the server's tools and runs calls, each
// bounded by the server's timeout; a process that exits, a connection that closes, a call that
// does not answer in time, or a line that is not JSON-RPC ends the pending calls with a named error
// (mcpErrors.ts) and never throws past the caller. A connection that broke is made again on the next call.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerView, McpToolView } from "../../contract/mcp.js";
import type { JsonObject } from "../../contract/engineProtocol.js";
import { KvaultError } from "../../engine/index.js";
import type { McpServerConfig } from "./mcpConfig.js";
import {
    McpMalformedReplyError,
    McpServerCrashedError,
    McpServerUnavailableError,
    McpToolFailedError,
    McpToolTimeoutError,
    McpToolUnknownError
} from "./mcpErrors.js";

/** A tool as the model is told of it: its name, description and arguments' JSON schema. */
export interface McpTool extends McpToolView {
    readonly inputSchema: JsonObject;
}

/** Bounds on what a server may hand back. */
export const mcpConnectionLimits = Object.freeze({
    /** Pages of tools/list read at most (a server that pages forever is cut off there). */
    maxToolPages: 16,
    /** The server's stderr kept to say why it exited, in characters. */
    maxStderrChars: 2_000,
    /** The handshake and tools/list: a stdio server's start (node, npx, uvx) may take longer than its calls' timeout. */
    connectTimeoutMs: 60_000
});

/** A pending call's way out when the connection breaks under it. */
type Breaker = (error: KvaultError) => void;

export class McpConnection {
    #client: Client | undefined;
    #connecting: Promise<Client> | undefined;
    #state: McpServerView["state"] = "connecting";
    #tools: readonly McpTool[] = [];
    #error: KvaultError | undefined;
    #stderr = "";
    readonly #pending = new Set<Breaker>();
    #disposed = false;

    constructor(
        readonly config: McpServerConfig,
        private readonly log: (line: string) => void
    ) {}

    get tools(): readonly McpTool[] {
        return this.#tools;
    }

    view(): McpServerView {
        const { config } = this;
        return {
            name: config.name,
            transport: config.transport,
            target: config.transport === "stdio" ? [config.command, ...config.args].join(" ") : config.url,
            state: this.#state,
            tools: this.#tools.map(({ name, description }) => ({ name, ...(description === undefined ? {} : { description }) })),
            ...(this.#error === undefined ? {} : { error: { code: this.#error.code, message: this.#error.message } })
        };
    }

    /** Connects (once at a time) and lists the tools; resolves either way, the state saying how it went. */
    async connect(): Promise<void> {
        await this.#connected().catch(() => undefined);
    }

    /** Calls `tool` with `args`; its result as text, or a named error. Aborting `signal` cancels it. */
    async call(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
        const client = await this.#connected();
        if (!this.#tools.some((item) => item.name === tool)) {
            throw new McpToolUnknownError(
                `The server "${this.config.name}" has no tool "${tool}"; it offers ${this.#tools.map((item) => item.name).join(", ") || "none"}.`
            );
        }
        let breaker: Breaker | undefined;
        const broken = new Promise<never>((_, reject) => {
            breaker = reject;
        });
        this.#pending.add(breaker!);
        try {
            const result = await Promise.race([
                client.callTool({ name: tool, arguments: args }, undefined, {
                    timeout: this.config.timeoutMs,
                    ...(signal === undefined ? {} : { signal })
                }),
                broken
            ]);
            const text = resultText(Array.isArray(result.content) ? (result.content as ToolContent) : []);
            if (result.isError === true) {
                throw new McpToolFailedError(`The tool "${tool}" of "${this.config.name}" answered with an error: ${text || "(no text)"}`);
            }
            return text;
        } catch (error) {
            throw this.#callError(tool, error);
        } finally {
            this.#pending.delete(breaker!);
        }
    }

    /** Closes the connection (a stdio server's process ends); idempotent. */
    async dispose(): Promise<void> {
        this.#disposed = true;
        const client = this.#client;
        this.#client = undefined;
        await client?.close().catch(() => undefined);
    }

    #connected(): Promise<Client> {
        if (this.#client !== undefined) {
            return Promise.resolve(this.#client);
        }
        if (this.#disposed) {
            return Promise.reject(new McpServerUnavailableError(`The server "${this.config.name}" is closed: Kvault is stopping.`));
        }
        this.#connecting ??= this.#open().finally(() => {
            this.#connecting = undefined;
        });
        return this.#connecting;
    }

    async #open(): Promise<Client> {
        this.#state = "connecting";
        this.#stderr = "";
        const client = new Client({ name: "kvault", version: "1" });
        const transport = this.#transport();
        client.onerror = (error) => this.#onTransportError(client, error);
        client.onclose = () => this.#onClose(client);
        try {
            const timeout = Math.max(this.config.timeoutMs, mcpConnectionLimits.connectTimeoutMs);
            await client.connect(transport, { timeout });
            this.#tools = await listTools(client, timeout);
        } catch (error) {
            await client.close().catch(() => undefined);
            const why = this.#stderrNote() || (error as Error).message;
            this.#fail(
                new McpServerUnavailableError(
                    `The server "${this.config.name}" could not be connected: ${why}. Check its entry in mcp.json and that it runs on its own.`
                )
            );
            throw this.#error;
        }
        if (this.#disposed) {
            await client.close().catch(() => undefined);
            throw new McpServerUnavailableError(`The server "${this.config.name}" is closed: Kvault is stopping.`);
        }
        this.#client = client;
        this.#state = "connected";
        this.#error = undefined;
        this.log(`MCP server "${this.config.name}": connected, ${this.#tools.length} tool(s).`);
        return client;
    }

    #transport(): Transport {
        const { config } = this;
        if (config.transport === "http") {
            return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: { ...config.headers } } });
        }
        const transport = new StdioClientTransport({
            command: config.command,
            args: [...config.args],
            env: { ...getDefaultEnvironment(), ...config.env },
            stderr: "pipe",
            ...(config.cwd === undefined ? {} : { cwd: config.cwd })
        });
        transport.stderr?.on("data", (chunk: Buffer) => {
            this.#stderr = (this.#stderr + chunk.toString("utf8")).slice(-mcpConnectionLimits.maxStderrChars);
        });
        return transport;
    }

    /** A line that is not JSON-RPC: the calls waiting on this server end, and the connection is made again on the next call. */
    #onTransportError(client: Client, error: Error): void {
        if (this.#client !== client || this.#pending.size === 0) {
            this.log(`MCP server "${this.config.name}": ${error.message}`);
            return;
        }
        const failure = new McpMalformedReplyError(
            `The server "${this.config.name}" wrote something that is not MCP's JSON-RPC (${error.message.slice(0, 200)}); the call was ended and the server will be started again on the next call. Fix the server: its stdout is for JSON-RPC alone.`
        );
        this.#fail(failure);
        this.#breakAll(failure);
        this.#client = undefined;
        void client.close().catch(() => undefined);
    }

    #onClose(client: Client): void {
        if (this.#client !== client) {
            return;
        }
        this.#client = undefined;
        if (this.#disposed) {
            return;
        }
        const failure = new McpServerCrashedError(
            `The server "${this.config.name}" exited or closed its connection${this.#stderrNote() === "" ? "" : ` (${this.#stderrNote()})`}; it will be started again on the next call.`
        );
        this.#fail(failure);
        this.#breakAll(failure);
    }

    #breakAll(error: KvaultError): void {
        for (const breaker of [...this.#pending]) {
            breaker(error);
        }
        this.#pending.clear();
    }

    #fail(error: KvaultError): void {
        this.#state = "failed";
        this.#error = error;
        this.log(`MCP server "${this.config.name}": ${error.message}`);
    }

    #callError(tool: string, error: unknown): KvaultError {
        if (error instanceof KvaultError) {
            return error;
        }
        if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) {
            return new McpToolTimeoutError(
                `The tool "${tool}" of "${this.config.name}" did not answer within ${this.config.timeoutMs.toLocaleString("en-US")} ms; the call was cancelled. Raise "timeout" in mcp.json if it needs longer.`
            );
        }
        if (error instanceof McpError && error.code === (ErrorCode.ConnectionClosed as number)) {
            return this.#error ?? new McpServerCrashedError(`The server "${this.config.name}" closed its connection during the call.`);
        }
        return new McpToolFailedError(`The tool "${tool}" of "${this.config.name}" failed: ${(error as Error).message}`);
    }

    #stderrNote(): string {
        const lines = this.#stderr.trim().split("\n");
        return lines.at(-1)?.trim() ?? "";
    }
}

/** Every page of tools/list, up to mcpConnectionLimits.maxToolPages. */
async function listTools(client: Client, timeoutMs: number): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < mcpConnectionLimits.maxToolPages; page++) {
        const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
        for (const tool of listed.tools) {
            tools.push({
                name: tool.name,
                ...(tool.description === undefined ? {} : { description: tool.description }),
                inputSchema: tool.inputSchema as JsonObject
            });
        }
        cursor = listed.nextCursor;
        if (cursor === undefined) {
            break;
        }
    }
    return tools;
}

type ToolContent = readonly { readonly type: string; readonly text?: unknown; readonly mimeType?: unknown }[];

/** A call's content as text: text parts as they are, anything else named with its type. */
function resultText(content: ToolContent): string {
    return content
        .map((part) =>
            part.type === "text" && typeof part.text === "string"
                ? part.text
                : `[${part.type}${typeof part.mimeType === "string" ? ` ${part.mimeType}` : ""}]`
        )
        .join("\n");
}
