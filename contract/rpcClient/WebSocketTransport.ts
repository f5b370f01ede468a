import { MESSAGE_TOO_LARGE, oversizeMessage, utf8ByteLength } from "../limits.js";
import type { RpcRequest } from "../rpc.js";
import { RpcError } from "./RpcError.js";
import type { RpcTransport, RpcTransportHandlers } from "./RpcTransport.js";

/** Waits before the n-th reconnect (ms); the last repeats. */
export const reconnectDelaysMs: readonly number[] = [250, 500, 1_000, 2_000, 5_000];

/** The WHATWG WebSocket's readyState of an open connection (the browser's and Node 22's global WebSocket). */
const OPEN = 1;

/**
 * What this transport uses of the WHATWG WebSocket: the browser's and Node's global one alike.
 * Named here because the host's TypeScript types (Node 20's) do not declare the global.
 */
interface StandardWebSocket {
    readonly readyState: number;
    send(text: string): void;
    close(): void;
    addEventListener(type: "open" | "close" | "error", listener: () => void): void;
    addEventListener(type: "message", listener: (event: { readonly data: unknown }) => void): void;
}

export interface WebSocketTransportOptions {
    /** Opens the connection again after every close, with a growing pause (a page); otherwise a close is final (a command). */
    readonly reconnect?: boolean;
}

/**
 * The headless server's RPC: a WebSocket at `/rpc`, JSON text both ways (host/rpc/RpcServer.ts),
 * over the runtime's own WebSocket (a browser's; Node 22's global). A page's reconnects after
 * every close; a command's or a test's closes once, for good.
 */
export class WebSocketTransport implements RpcTransport {
    readonly #reconnect: boolean;
    #socket: StandardWebSocket | undefined;
    #handlers: RpcTransportHandlers | undefined;
    #retryTimer: ReturnType<typeof setTimeout> | undefined;
    #numFailedAttempts = 0;
    #disposed = false;

    constructor(
        private readonly url: string,
        options: WebSocketTransportOptions = {}
    ) {
        this.#reconnect = options.reconnect ?? true;
    }

    start(handlers: RpcTransportHandlers): void {
        this.#handlers = handlers;
        this.#connect();
    }

    send(request: RpcRequest): boolean {
        if (this.#socket?.readyState !== OPEN) {
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
        const socket = new (globalThis as unknown as { WebSocket: new (url: string) => StandardWebSocket }).WebSocket(this.url);
        this.#socket = socket;
        socket.addEventListener("open", () => {
            this.#numFailedAttempts = 0;
            this.#handlers?.onOpen();
        });
        socket.addEventListener("message", (event) => {
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
        // Node's WebSocket (undici) may fire only "error" for a refused or failed handshake, without the "close" a browser
        // sends after it: either one ends this socket, once.
        socket.addEventListener("error", () => this.#lost(socket));
        socket.addEventListener("close", () => this.#lost(socket));
    }

    #lost(socket: StandardWebSocket): void {
        if (this.#socket !== socket || this.#disposed) {
            return;
        }
        this.#socket = undefined;
        const attempt = ++this.#numFailedAttempts;
        this.#handlers?.onClose(this.#reconnect, attempt);
        if (this.#reconnect) {
            const delay = reconnectDelaysMs[Math.min(attempt, reconnectDelaysMs.length) - 1]!;
            this.#retryTimer = setTimeout(() => this.#connect(), delay);
        }
    }
}
