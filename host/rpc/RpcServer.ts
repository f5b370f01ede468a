import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { MESSAGE_TOO_LARGE, oversizeMessage, rpcLimits } from "../../contract/limits.js";
import type { RpcServerMessage } from "../../contract/rpc.js";

import type { RpcDispatcher } from "./RpcDispatcher.js";

export interface RpcServerOptions {
    /** The largest message read and answered (default rpcLimits.maxMessageBytes); a test may lower it. */
    readonly maxMessageBytes?: number;
    readonly log?: (line: string) => void;
}

/** The close code for a message too large to read (RFC 6455 §7.4.1, "Message Too Big"). */
export const MESSAGE_TOO_BIG_CLOSE_CODE = 1009;

/**
 * The renderer's RPC over a WebSocket (headless mode): each text message `{id, method, params}`
 * goes to the shared RpcDispatcher, and its answer comes back as `{id, result}` or `{id, error}`.
 * A bad message is answered with an error and changes nothing; a message over the size limit is
 * answered with rpc_message_too_large, by its id when its first bytes name one, and not parsed.
 * One over twice the limit is not even read: the connection is closed with 1009, and only it. No
 * message, socket or stream error ever ends the server. A connection that closes cancels its own
 * turns (a client going away frees its pages); a chat's turn, the host's, runs on (host/rpc/HostTurns.ts).
 */
export class RpcServer {
    readonly #server: WebSocketServer;
    readonly #maxMessageBytes: number;
    readonly #log: (line: string) => void;
    #nextCallerId = 1;

    constructor(
        private readonly dispatcher: RpcDispatcher,
        options: RpcServerOptions = {}
    ) {
        this.#maxMessageBytes = options.maxMessageBytes ?? rpcLimits.maxMessageBytes;
        this.#log = options.log ?? ((line) => process.stderr.write(`[kvault rpc] ${line}\n`));
        // ws refuses a frame over maxPayload from its header, before buffering it: the hard cap on what one message can cost.
        this.#server = new WebSocketServer({ noServer: true, maxPayload: 2 * this.#maxMessageBytes });
        this.#server.on("connection", (socket: WebSocket) => this.#serve(socket));
        this.#server.on("error", (error) => this.#log(`the RPC WebSocket server failed: ${error.message}`));
    }

    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
        this.#server.handleUpgrade(request, socket, head, (webSocket) => this.#server.emit("connection", webSocket, request));
    }

    async close(): Promise<void> {
        for (const client of this.#server.clients) {
            client.terminate();
        }
        await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    }

    #serve(socket: WebSocket): void {
        const caller = {
            id: this.#nextCallerId++,
            send: (event: RpcServerMessage) => send(event)
        };
        const send = (message: RpcServerMessage): void => {
            if (socket.readyState === socket.OPEN) {
                socket.send(JSON.stringify(message), (error) => {
                    if (error !== undefined && error !== null) {
                        this.#log(`an RPC answer could not be sent (${error.message}); the connection is closing.`);
                    }
                });
            }
        };
        // Without this, ws's RangeError for a frame over maxPayload (or invalid UTF-8, or a reset) would end the process.
        socket.on("error", (error: Error & { code?: string }) => {
            this.#log(
                error.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH"
                    ? `closed an RPC connection (${MESSAGE_TOO_BIG_CLOSE_CODE}): a message was over ${(2 * this.#maxMessageBytes).toLocaleString("en-US")} bytes, twice the limit of ${this.#maxMessageBytes.toLocaleString("en-US")}.`
                    : `closed an RPC connection: ${error.message}`
            );
        });
        socket.on("close", () => this.dispatcher.closeCaller(caller.id));
        socket.on("message", (data, isBinary) => {
            const numBytes = byteLength(data);
            if (numBytes > this.#maxMessageBytes) {
                send({
                    id: leadingId(data),
                    error: { code: MESSAGE_TOO_LARGE, message: oversizeMessage(numBytes, this.#maxMessageBytes)! }
                });
                return;
            }
            const envelope = readEnvelope(data, isBinary);
            if ("error" in envelope) {
                send({ id: envelope.id, error: { code: "invalid_request", message: envelope.error } });
                return;
            }
            const { id, method, params } = envelope;
            void this.dispatcher
                .call(caller, method, params)
                .then((answer) => send(answer.ok ? { id, result: answer.value } : { id, error: answer.error }));
        });
    }
}

type Envelope =
    | { readonly id: number; readonly method: unknown; readonly params: unknown }
    | { readonly id: number | null; readonly error: string };

/** `{id, method, params}` from a text message; params may be left out for a method that takes none. */
function readEnvelope(data: RawData, isBinary: boolean): Envelope {
    if (isBinary) {
        return { id: null, error: "RPC messages are JSON text." };
    }
    let message: unknown;
    try {
        message = JSON.parse(String(data));
    } catch (error) {
        return { id: null, error: `An RPC message is JSON; this one is not (${(error as Error).message.slice(0, 200)}).` };
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
        return { id: null, error: "An RPC message is a JSON object with id, method and params." };
    }
    const { id, method, params } = message as Record<string, unknown>;
    if (typeof id !== "number" || !Number.isSafeInteger(id)) {
        return { id: null, error: "id must be an integer." };
    }
    return { id, method, params: params === undefined ? {} : params };
}

function byteLength(data: RawData): number {
    if (Array.isArray(data)) {
        return data.reduce((sum, chunk) => sum + chunk.length, 0);
    }
    return data instanceof ArrayBuffer ? data.byteLength : data.length;
}

/** The id of a message too large to parse, when it starts `{"id":N` as the renderer's do; null otherwise. */
function leadingId(data: RawData): number | null {
    const first = Array.isArray(data) ? data[0] : data instanceof ArrayBuffer ? Buffer.from(data, 0, Math.min(40, data.byteLength)) : data;
    const head = first?.subarray(0, 40).toString("latin1") ?? "";
    const match = /^\s*\{\s*"id"\s*:\s*(\d{1,15})\s*[,}]/.exec(head);
    return match === null ? null : Number(match[1]);
}
