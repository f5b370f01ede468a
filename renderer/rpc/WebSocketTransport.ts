import { MESSAGE_TOO_LARGE, oversizeMessage, utf8ByteLength } from "../../contract/limits.js";
import type { RpcRequest } from "../../contract/rpc.js";
import { RpcError } from "./RpcError.js";
import type { RpcTransport, RpcTransportHandlers } from "./RpcTransport.js";

/** Waits before the n-th reconnect (ms); the last repeats. */
export const reconnectDelaysMs: readonly number[] = [250, 500, 1_000, 2_000, 5_000];

/**
 * The headless server's RPC: a WebSocket at `/rpc` on the page's own origin, JSON text
 * both ways (host/rpc/RpcServer.ts). Reconnects after every close, with a growing pause.
 */
export class WebSocketTransport implements RpcTransport {
    #socket: WebSocket | undefined;
    #handlers: RpcTransportHandlers | undefined;
    #retryTimer: ReturnType<typeof setTimeout> | undefined;
    #numFailedAttempts = 0;
    #disposed = false;

    constructor(private readonly url: string) {}

    start(handlers: RpcTransportHandlers): void {
        this.#handlers = handlers;
        this.#connect();
    }

    send(request: RpcRequest): boolean {
        if (this.#socket?.readyState !== WebSocket.OPEN) {
            return false;
        }
        const text = JSON.stringify(request);
        // The server would refuse it unread (host/rpc/RpcServer.ts); say so here, with the same numbers, without sending it.
        const tooLarge = oversizeMessage(utf8ByteLength(text));
        if (tooLarge !== undefined) {
            throw new RpcError(MESSAGE_TOO_LARGE, tooLarge);
        }
        this.#socket.send(text);
        return true;
    }

    dispose(): void {
        this.#disposed = true;
        clearTimeout(this.#retryTimer);
        this.#socket?.close();
        this.#socket = undefined;
    }

    #connect(): void {
        const socket = new WebSocket(this.url);
        this.#socket = socket;
        socket.addEventListener("open", () => {
            this.#numFailedAttempts = 0;
            this.#handlers?.onOpen();
        });
        socket.addEventListener("message", (event: MessageEvent) => {
            if (typeof event.data !== "string") {
                return;
            }
            let message: unknown;
            try {
                message = JSON.parse(event.data);
            } catch {
                return; // not ours to interpret; RpcClient only acts on well-formed messages
            }
            this.#handlers?.onMessage(message);
        });
        socket.addEventListener("close", () => {
            if (this.#socket !== socket || this.#disposed) {
                return;
            }
            this.#socket = undefined;
            const attempt = ++this.#numFailedAttempts;
            this.#handlers?.onClose(true, attempt);
            const delay = reconnectDelaysMs[Math.min(attempt, reconnectDelaysMs.length) - 1]!;
            this.#retryTimer = setTimeout(() => this.#connect(), delay);
        });
    }
}
