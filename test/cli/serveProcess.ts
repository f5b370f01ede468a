// The headless server run from its sources (node with tsx, without npm's banner) or as built, and
// the one RPC client over its WebSocket: for the tests that drive the headless server from outside.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import {
    RpcClient,
    toRpcError,
    WebSocketTransport,
    type ChatCallRequest,
    type PlainRpcMethod,
    type TurnListener
} from "../../contract/rpcClient/index.js";
import { repositoryRoot } from "../support/generatedModels.js";

export interface ServeProcess {
    readonly child: ChildProcess;
    readonly pid: number;
    /** stdout lines so far. */
    readonly stdout: string[];
    stderr(): string;
    /** Resolves when it has exited: its code, or the signal that ended it. */
    readonly exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
}

/** The small engine these tests run: a 512-token window, two decode sequences, 16-token pages, on the CPU whatever GPU drivers the machine has. */
export const smallEngineArgs = ["--context", "512", "--decode-sequences", "2", "--page-tokens", "16", "--gpu", "off"] as const;

/** How the server is started: node's arguments before serve's own, in a working directory. */
export interface ServeCommand {
    readonly nodeArgs: readonly string[];
    readonly cwd: string;
}

/** serve.ts from this checkout's sources, through tsx. */
export const serveFromSources: ServeCommand = { nodeArgs: ["--import", "tsx", "host/headless/serve.ts"], cwd: repositoryRoot };

/** Starts the server; an `env` entry that is undefined is left out of its environment. */
export function startServe(
    args: readonly string[],
    env: Readonly<Record<string, string | undefined>> = {},
    command: ServeCommand = serveFromSources
): ServeProcess {
    const child = spawn(process.execPath, [...command.nodeArgs, ...args], {
        cwd: command.cwd,
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
    });
    const stdout: string[] = [];
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => stdout.push(...chunk.toString().split("\n").filter(Boolean)));
    child.stderr!.on("data", (chunk: Buffer) => void (stderr += chunk.toString()));
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once("exit", (code, signal) => resolve({ code, signal }))
    );
    return { child, pid: child.pid!, stdout, stderr: () => stderr, exit };
}

/** The URL it listens on, once it says so; throws with its stderr if it exits first or takes over `timeoutMs`. */
export async function listening(server: ServeProcess, timeoutMs = 90_000): Promise<string> {
    for (let waited = 0; waited < timeoutMs; waited += 100) {
        const line = server.stdout.find((candidate) => candidate.startsWith("Kvault listening on "));
        if (line !== undefined) {
            return line.slice("Kvault listening on ".length);
        }
        if (server.child.exitCode !== null || server.child.signalCode !== null) {
            throw new Error(`serve exited (${server.child.exitCode ?? server.child.signalCode}) before listening:\n${server.stderr()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`serve did not listen within ${timeoutMs / 1000} s:\n${server.stderr()}`);
}

/** SIGTERM (a clean stop), then SIGKILL if it has not exited within `graceMs`. */
export async function stopServe(server: ServeProcess, graceMs = 20_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill("SIGTERM");
    }
    const timer = setTimeout(() => server.child.kill("SIGKILL"), graceMs);
    const exited = await server.exit;
    clearTimeout(timer);
    return exited;
}

/** The peak resident memory of a live process (Linux: VmHWM), in bytes. */
export function peakRssBytes(pid: number): number {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(status);
    if (match === null) {
        throw new Error(`/proc/${pid}/status has no VmHWM line`);
    }
    return Number(match[1]) * 1024;
}

export type RpcReply = { readonly result: unknown } | { readonly error: { code: string; message: string } };

/** How long a test's call may wait for its answer unless it says. */
const CALL_TIMEOUT_MS = 60_000;

/**
 * The one RPC client (contract/rpcClient/, the renderer's and the `kvault` command's) over the
 * server's WebSocket with the API key, not reconnecting, for tests that check a call's error as a
 * value: `call` answers `{result}` or `{error}`, `result` throws with the error.
 */
export class RpcSocket {
    readonly #turnListeners = new Set<TurnListener>();

    private constructor(readonly client: RpcClient) {}

    static async connect(url: string, apiKey: string): Promise<RpcSocket> {
        const socketUrl = `${url.replace(/^http/, "ws")}/rpc?key=${encodeURIComponent(apiKey)}`;
        const client = new RpcClient(new WebSocketTransport(socketUrl, { reconnect: false }), { callTimeoutMs: CALL_TIMEOUT_MS });
        await client.whenOpen(CALL_TIMEOUT_MS);
        return new RpcSocket(client);
    }

    /** Calls `listener` with every turn event of a chat started through `call`; returns the unsubscribe. */
    onTurnEvent(listener: TurnListener): () => void {
        this.#turnListeners.add(listener);
        return () => this.#turnListeners.delete(listener);
    }

    async call(method: string, params: unknown, timeoutMs?: number): Promise<RpcReply> {
        const options = timeoutMs === undefined ? undefined : { timeoutMs };
        try {
            const result =
                method === "chat"
                    ? await this.client.chat(
                          params as ChatCallRequest,
                          (event) => this.#turnListeners.forEach((listener) => listener(event)),
                          options
                      )
                    : await this.client.call(method as PlainRpcMethod, params as never, options);
            return { result };
        } catch (error) {
            const { code, message } = toRpcError(error);
            return { error: { code, message } };
        }
    }

    /** The call's result; throws with its error when it has one. */
    async result<T>(method: string, params: unknown, timeoutMs?: number): Promise<T> {
        const reply = await this.call(method, params, timeoutMs);
        if ("error" in reply) {
            throw new Error(`${method} failed: ${reply.error.code}: ${reply.error.message}`);
        }
        return reply.result as T;
    }

    close(): void {
        this.client.dispose();
    }
}
