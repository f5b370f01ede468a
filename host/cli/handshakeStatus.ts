import crypto from "node:crypto";
import http from "node:http";
import https from "node:https";

/** What a server answered a WebSocket handshake with: its HTTP status (101: it would open), or why nothing answered. */
export type HandshakeAnswer = { readonly status: number } | { readonly unreachable: string };

/**
 * Asks the server at `url` (ws: or wss:) for a WebSocket handshake and reads only its status,
 * closing the connection either way. A WebSocket (the browser's API, which Node's follows) does
 * not say why a handshake failed; this does, so that a refused key can be told from a server
 * that does not serve the RPC.
 */
export async function handshakeStatus(url: URL, timeoutMs: number): Promise<HandshakeAnswer> {
    const transport = url.protocol === "wss:" ? https : http;
    return await new Promise((resolve) => {
        const request = transport.request({
            hostname: url.hostname.replace(/^\[|\]$/g, ""),
            port: url.port,
            path: `${url.pathname}${url.search}`,
            timeout: timeoutMs,
            headers: {
                Connection: "Upgrade",
                Upgrade: "websocket",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": crypto.randomBytes(16).toString("base64")
            }
        });
        request.once("upgrade", (_response, socket) => {
            socket.destroy();
            resolve({ status: 101 });
        });
        request.once("response", (response) => {
            response.resume();
            resolve({ status: response.statusCode ?? 0 });
        });
        request.once("timeout", () => request.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
        request.once("error", (error) => resolve({ unreachable: error.message }));
        request.end();
    });
}
