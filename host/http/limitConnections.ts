import type http from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { OpenAiError } from "./OpenAiError.js";

/** How long a shed connection may linger after its 503 before it is destroyed (ms): long enough for the client to read it. */
const SHED_LINGER_MS = 2_000;

/**
 * Caps `server`'s open connections, HTTP and upgraded WebSockets alike, at `maxConnections`. One
 * more is answered at once, before any of its request is read, with a 503 and `Retry-After`, and
 * closed: a client holding sockets open (slow headers, slow bodies) can use up the cap, never the
 * process's file descriptors or memory. Returns whether a socket was shed, so the request and
 * upgrade handlers leave it alone.
 */
export function limitConnections(server: http.Server, maxConnections: number, retryAfterSeconds = 1): (socket: Duplex) => boolean {
    const open = new Set<Socket>();
    const shed = new WeakSet<Duplex>();
    server.on("connection", (socket: Socket) => {
        if (open.size < maxConnections) {
            open.add(socket);
            socket.once("close", () => open.delete(socket));
            return;
        }
        shed.add(socket);
        const body = JSON.stringify(
            new OpenAiError(
                503,
                `Kvault has ${open.size.toLocaleString("en-US")} connections open, the most it takes (${maxConnections.toLocaleString("en-US")}). Retry in ${retryAfterSeconds} s, or close connections you no longer use.`,
                "server_error",
                "too_many_connections",
                null,
                retryAfterSeconds
            ).body()
        );
        socket.end(
            "HTTP/1.1 503 Service Unavailable\r\n" +
                `Retry-After: ${retryAfterSeconds}\r\n` +
                "Content-Type: application/json; charset=utf-8\r\n" +
                "X-Content-Type-Options: nosniff\r\n" +
                `Content-Length: ${Buffer.byteLength(body)}\r\n` +
                "Connection: close\r\n\r\n" +
                body
        );
        socket.setTimeout(SHED_LINGER_MS, () => socket.destroy());
    });
    return (socket) => shed.has(socket);
}
