import type { ChatTurnRequest } from "../../contract/engineProtocol.js";
import type { RpcMethod, RpcMethods, RpcRequest } from "../../contract/rpc.js";
import { readTurnEvent } from "../../contract/turnEvents.js";
import type { ConnectionStatus, KvaultRpc, PlainRpcMethod, TurnListener } from "./KvaultRpc.js";
import { clientErrorCodes, RpcError, toRpcError } from "./RpcError.js";
import type { RpcTransport } from "./RpcTransport.js";

interface PendingCall {
    readonly resolve: (result: unknown) => void;
    readonly reject: (error: RpcError) => void;
}

/**
 * KvaultRpc over any transport: numbers the calls, matches answers to them, routes turn events
 * to their turn's listener by requestId, and fails every call in flight when the connection
 * closes (a chat's turn runs on in the host: attach to it again once the connection is back).
 */
export class RpcClient implements KvaultRpc {
    readonly #pending = new Map<number, PendingCall>();
    readonly #turnListeners = new Map<string, TurnListener>();
    readonly #statusListeners = new Set<(status: ConnectionStatus) => void>();
    #status: ConnectionStatus = { kind: "connecting" };
    #nextId = 1;
    #disposed = false;

    constructor(private readonly transport: RpcTransport) {
        transport.start({
            onOpen: () => this.#setStatus({ kind: "open" }),
            onMessage: (message) => this.#receive(message),
            onClose: (willRetry, attempt) => {
                this.#failAll(
                    new RpcError(
                        clientErrorCodes.connectionLost,
                        "The connection to the Kvault server closed before it answered. " +
                            "Kvault reconnects by itself; an answer being written goes on in the server and shows again once it is back."
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

    call<M extends PlainRpcMethod>(method: M, params: RpcMethods[M]["params"]): Promise<RpcMethods[M]["result"]> {
        return this.#send(method, params) as Promise<RpcMethods[M]["result"]>;
    }

    chat(
        request: ChatTurnRequest & { readonly answerId?: string; readonly answerParent?: string | null },
        listener: TurnListener
    ): Promise<RpcMethods["chat"]["result"]> {
        return this.#stream("chat", request.requestId, request, listener) as Promise<RpcMethods["chat"]["result"]>;
    }

    attach(requestId: string, listener: TurnListener): Promise<RpcMethods["attachTurn"]["result"]> {
        return this.#stream("attachTurn", requestId, { requestId }, listener) as Promise<RpcMethods["attachTurn"]["result"]>;
    }

    /** A call whose turn events (by `requestId`) go to `listener` until it settles. */
    async #stream(method: "chat" | "attachTurn", requestId: string, params: unknown, listener: TurnListener): Promise<unknown> {
        if (this.#turnListeners.has(requestId)) {
            throw new RpcError("invalid_request", `A turn with requestId ${requestId} is already running.`);
        }
        this.#turnListeners.set(requestId, listener);
        try {
            return await this.#send(method, params);
        } finally {
            this.#turnListeners.delete(requestId);
        }
    }

    dispose(): void {
        if (this.#disposed) {
            return;
        }
        this.#disposed = true;
        this.#failAll(new RpcError(clientErrorCodes.connectionLost, "The page closed its connection to the Kvault server."));
        this.transport.dispose();
        this.#statusListeners.clear();
    }

    #send(method: RpcMethod, params: unknown): Promise<unknown> {
        return new Promise((resolve, reject) => {
            if (this.#status.kind !== "open") {
                reject(
                    new RpcError(
                        clientErrorCodes.notConnected,
                        this.#status.kind === "unavailable"
                            ? this.#status.reason
                            : "Kvault is not connected to its server right now; it reconnects by itself. Try again in a moment."
                    )
                );
                return;
            }
            const id = this.#nextId++;
            this.#pending.set(id, { resolve, reject });
            let sent: boolean;
            try {
                sent = this.transport.send({ id, method, params } as RpcRequest);
            } catch (error) {
                this.#pending.delete(id);
                reject(toRpcError(error));
                return;
            }
            if (!sent) {
                this.#pending.delete(id);
                reject(
                    new RpcError(
                        clientErrorCodes.notConnected,
                        "Kvault is not connected to its server right now; it reconnects by itself. Try again in a moment."
                    )
                );
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
            this.#turnListeners.get(event.requestId)?.(event);
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
            return;
        }
        this.#pending.delete(record.id);
        if ("error" in record) {
            pending.reject(
                isErrorPayload(record.error)
                    ? new RpcError(record.error.code, record.error.message)
                    : new RpcError(clientErrorCodes.badMessage, "The Kvault server answered with an error this page cannot read.")
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
