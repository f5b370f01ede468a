import WebSocket from "ws";
import type { RpcMethod, RpcParams, RpcResult } from "../../contract/rpc.js";
import { CliError } from "./CliError.js";
import { exitCodes } from "./exitCodes.js";
import type { KvaultClient } from "./KvaultClient.js";

/** How long connecting and each call may take. */
const RPC_TIMEOUT_MS = 30_000;

type Pending = { readonly resolve: (value: unknown) => void; readonly reject: (error: Error) => void };

/**
 * The `kvault` command's calls into the host's RPC (the spec the app's settings screen uses), over
 * the headless server's `/rpc` WebSocket with the API key: what the HTTP API does not offer, such
 * as making a key for `kvault launch` or starting a download for `kvault pull`.
 */
export class KvaultRpc {
    readonly #socket: WebSocket;
    readonly #pending = new Map<number, Pending>();
    #nextId = 1;
    #closedWith: Error | undefined;

    private constructor(socket: WebSocket) {
        this.#socket = socket;
        socket.on("message", (data) => this.#answer(String(data)));
        socket.on("close", () => this.#fail(new CliError("Kvault closed the RPC connection.", "rpc_closed")));
        socket.on("error", (error) => this.#fail(new CliError(`The RPC connection failed: ${error.message}`, "rpc_failed")));
    }

    static async open(client: KvaultClient): Promise<KvaultRpc> {
        const url = new URL("/rpc", client.baseUrl.replace(/^http/, "ws"));
        url.searchParams.set("key", client.options.apiKey ?? "");
        const socket = new WebSocket(url, { handshakeTimeout: RPC_TIMEOUT_MS });
        await new Promise<void>((resolve, reject) => {
            socket.once("open", () => resolve());
            socket.once("unexpected-response", (_request, response) => {
                const status = response.statusCode ?? 0;
                reject(
                    status === 401
                        ? new CliError(
                              `Kvault at ${client.baseUrl} refused the API key for its settings (401). Give the key \`kvault serve\` printed, the server's own, with --api-key or KVAULT_API_KEY.`,
                              "key_refused",
                              exitCodes.refused
                          )
                        : new CliError(`Kvault at ${client.baseUrl} refused the RPC connection (${status}).`, "rpc_refused")
                );
            });
            socket.once("error", (error) =>
                reject(
                    new CliError(
                        `No Kvault answered at ${client.baseUrl} (${error.message}). Start one with \`kvault serve\`, or give its address with --url or KVAULT_URL.`,
                        "server_unreachable",
                        exitCodes.unreachable
                    )
                )
            );
        });
        return new KvaultRpc(socket);
    }

    async call<M extends RpcMethod>(method: M, params: RpcParams<M>): Promise<RpcResult<M>> {
        if (this.#closedWith !== undefined) {
            throw this.#closedWith;
        }
        const id = this.#nextId++;
        return await new Promise<RpcResult<M>>((resolve, reject) => {
            const timer = setTimeout(() => {
                this.#pending.delete(id);
                reject(new CliError(`Kvault did not answer ${method} within ${RPC_TIMEOUT_MS / 1000} s.`, "rpc_timeout"));
            }, RPC_TIMEOUT_MS);
            this.#pending.set(id, {
                resolve: (value) => {
                    clearTimeout(timer);
                    resolve(value as RpcResult<M>);
                },
                reject: (error) => {
                    clearTimeout(timer);
                    reject(error);
                }
            });
            this.#socket.send(JSON.stringify({ id, method, params }));
        });
    }

    /** Idempotent. */
    close(): void {
        this.#closedWith ??= new CliError("The RPC connection is closed.", "rpc_closed");
        this.#socket.close();
    }

    #answer(text: string): void {
        let message: { id?: unknown; result?: unknown; error?: { code?: string; message?: string } };
        try {
            message = JSON.parse(text) as typeof message;
        } catch {
            return;
        }
        const pending = typeof message.id === "number" ? this.#pending.get(message.id) : undefined;
        if (pending === undefined) {
            return; // a turn's event, or an answer after its timeout
        }
        this.#pending.delete(message.id as number);
        if (message.error !== undefined) {
            pending.reject(new CliError(message.error.message ?? "Kvault refused the call.", message.error.code ?? "rpc_error"));
        } else {
            pending.resolve(message.result);
        }
    }

    #fail(error: Error): void {
        this.#closedWith ??= error;
        for (const pending of this.#pending.values()) {
            pending.reject(error);
        }
        this.#pending.clear();
    }
}
