import type { RpcMethod, RpcMethods, RpcRequest } from "../rpc.js";
import { readTurnEvent } from "../turnEvents.js";
import type { ChatCallRequest, ConnectionStatus, KvaultRpc, PlainRpcMethod, RpcCallOptions, TurnListener } from "./KvaultRpc.js";
import { clientErrorCodes, RpcError, toRpcError } from "./RpcError.js";
import type { RpcTransport } from "./RpcTransport.js";

interface PendingCall {
    readonly resolve: (result: unknown) => void;
    readonly reject: (error: RpcError) => void;
}

export interface RpcClientOptions {
    /** Each call's time limit (ms) unless the call gives its own; none when absent, as a page waits on a turn as long as it runs. */
    readonly callTimeoutMs?: number;
}

const NOT_CONNECTED_NOW = "Kvault is not connected to its server right now; it reconnects by itself. Try again in a moment.";

/**
 * KvaultRpc over any transport: numbers the calls, matches answers to them, routes turn events
 * to their turn's listener by requestId, and fails every call in flight when the connection
 * closes (a chat's turn runs on in the host: attach to it again once the connection is back).
 * The renderer, the `kvault` command and the tests all use this one client.
 */
export class RpcClient implements KvaultRpc {
    readonly #pending = new Map<number, PendingCall>();
    readonly #turnListeners = new Map<string, TurnListener>();
    readonly #statusListeners = new Set<(status: ConnectionStatus) => void>();
    readonly #callTimeoutMs: number | undefined;
    #status: ConnectionStatus = { kind: "connecting" };
    #nextId = 1;
    #disposed = false;

    constructor(
        private readonly transport: RpcTransport,
        options: RpcClientOptions = {}
    ) {
        this.#callTimeoutMs = options.callTimeoutMs;
        transport.start({
            onOpen: () => this.#setStatus({ kind: "open" }),
            onMessage: (message) => this.#receive(message),
            onClose: (willRetry, attempt) => {
                this.#failAll(
                    new RpcError(
                        clientErrorCodes.connectionLost,
                        "The connection to the Kvault server closed before it answered. " +
                            (willRetry
                                ? "Kvault reconnects by itself; an answer being written goes on in the server and shows again once it is back."
                                : "An answer being written goes on in the server.")
                    )
                );
                this.#setStatus(
                    willRetry
                        ? { kind: "reconnecting", attempt }
                        : { kind: "unavailable", reason: "The connection to the Kvault server closed." }
                );
            }
        });
    }

    get status(): ConnectionStatus {
        return this.#status;
    }

    onStatus(listener: (status: ConnectionStatus) => void): () => void {
        this.#statusListeners.add(listener);
        return () => this.#statusListeners.delete(listener);
    }

    /**
     * Resolves once the connection is open; rejects with not_connected when it closes first (a
     * transport that does not reconnect) or `timeoutMs` passes: for a client that makes its calls
     * right away rather than waiting for the status.
     */
    whenOpen(timeoutMs: number): Promise<void> {
        if (this.#status.kind === "open") {
            return Promise.resolve();
        }
        return new Promise((resolve, reject) => {
            const settle = (error: RpcError | undefined): void => {
                clearTimeout(timer);
                unsubscribe();
                if (error === undefined) {
                    resolve();
                } else {
                    reject(error);
                }
            };
            const timer = setTimeout(
                () =>
                    settle(
                        new RpcError(
                            clientErrorCodes.notConnected,
                            `The connection to the Kvault server did not open within ${timeoutMs / 1000} s.`
                        )
                    ),
                timeoutMs
            );
            const unsubscribe = this.onStatus((status) => {
                if (status.kind === "open") {
                    settle(undefined);
                } else if (status.kind === "unavailable" || status.kind === "reconnecting") {
                    settle(new RpcError(clientErrorCodes.notConnected, "The connection to the Kvault server could not be opened."));
                }
            });
        });
    }

    call<M extends PlainRpcMethod>(method: M, params: RpcMethods[M]["params"], options?: RpcCallOptions): Promise<RpcMethods[M]["result"]> {
        return this.#send(method, params, options) as Promise<RpcMethods[M]["result"]>;
    }

    chat(request: ChatCallRequest, listener: TurnListener, options?: RpcCallOptions): Promise<RpcMethods["chat"]["result"]> {
        return this.#stream("chat", request.requestId, request, listener, options) as Promise<RpcMethods["chat"]["result"]>;
    }

    attach(requestId: string, listener: TurnListener): Promise<RpcMethods["attachTurn"]["result"]> {
        return this.#stream("attachTurn", requestId, { requestId }, listener, undefined) as Promise<RpcMethods["attachTurn"]["result"]>;
    }

    /** A call whose turn events (by `requestId`) go to `listener` until it settles. */
    async #stream(
        method: "chat" | "attachTurn",
        requestId: string,
        params: unknown,
        listener: TurnListener,
        options: RpcCallOptions | undefined
    ): Promise<unknown> {
        if (this.#turnListeners.has(requestId)) {
            throw new RpcError("invalid_request", `A turn with requestId ${requestId} is already running.`);
        }
        this.#turnListeners.set(requestId, listener);
        try {
            return await this.#send(method, params, options);
        } finally {
            this.#turnListeners.delete(requestId);
        }
    }

    dispose(): void {
        if (this.#disposed) {
            return;
        }
        this.#disposed = true;
        this.#failAll(new RpcError(clientErrorCodes.connectionLost, "The client closed its connection to the Kvault server."));
        this.transport.dispose();
        this.#statusListeners.clear();
    }

    #send(method: RpcMethod, params: unknown, options: RpcCallOptions | undefined): Promise<unknown> {
        return new Promise((resolve, reject) => {
            if (this.#status.kind !== "open") {
                reject(
                    new RpcError(
                        clientErrorCodes.notConnected,
                        this.#status.kind === "unavailable" ? this.#status.reason : NOT_CONNECTED_NOW
                    )
                );
                return;
            }
            const id = this.#nextId++;
            const timeoutMs = options?.timeoutMs ?? this.#callTimeoutMs;
            const timer =
                timeoutMs === undefined
                    ? undefined
                    : setTimeout(() => {
                          this.#pending.delete(id);
                          reject(new RpcError(clientErrorCodes.timedOut, `Kvault did not answer ${method} within ${timeoutMs / 1000} s.`));
                      }, timeoutMs);
            this.#pending.set(id, {
                resolve: (result) => {
                    clearTimeout(timer);
                    resolve(result);
                },
                reject: (error) => {
                    clearTimeout(timer);
                    reject(error);
                }
            });
            let sent: boolean;
            try {
                sent = this.transport.send({ id, method, params } as RpcRequest);
            } catch (error) {
                this.#pending.get(id)?.reject(toRpcError(error));
                this.#pending.delete(id);
                return;
            }
            if (!sent) {
                this.#pending.get(id)?.reject(new RpcError(clientErrorCodes.notConnected, NOT_CONNECTED_NOW));
                this.#pending.delete(id);
            }
        });
    }

    #receive(message: unknown): void {
        if (typeof message !== "object" || message === null) {
            return;
        }
        const record = message as Record<string, unknown>;
        const event = readTurnEvent(record);
        if (event !== undefined) {
            void this.#turnListeners.get(event.requestId)?.(event);
            return;
        }
        if (typeof record.id !== "number") {
            // An error the server could not attribute to a call (it could not read our message): a bug here.
            if (isErrorPayload(record.error)) {
                console.error(`The Kvault server refused a message: ${record.error.message}`);
            }
            return;
        }
        const pending = this.#pending.get(record.id);
        if (pending === undefined) {
            return; // an answer after its call's time limit
        }
        this.#pending.delete(record.id);
        if ("error" in record) {
            pending.reject(
                isErrorPayload(record.error)
                    ? new RpcError(record.error.code, record.error.message)
                    : new RpcError(clientErrorCodes.badMessage, "The Kvault server answered with an error this client cannot read.")
            );
        } else {
            pending.resolve(record.result);
        }
    }

    #failAll(error: RpcError): void {
        const pending = [...this.#pending.values()];
        this.#pending.clear();
        for (const call of pending) {
            call.reject(error);
        }
    }

    #setStatus(status: ConnectionStatus): void {
        if (this.#disposed) {
            return;
        }
        this.#status = status;
        for (const listener of [...this.#statusListeners]) {
            listener(status);
        }
    }
}

function isErrorPayload(value: unknown): value is { code: string; message: string } {
    return (
        typeof value === "object" &&
        value !== null &&
        typeof (value as Record<string, unknown>).code === "string" &&
        typeof (value as Record<string, unknown>).message === "string"
    );
}
