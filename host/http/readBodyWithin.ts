import type { IncomingMessage, ServerResponse } from "node:http";
import { OpenAiError } from "./OpenAiError.js";
import { readJsonBody } from "./requestGuards.js";

/**
 * The JSON body, bounded in bytes (readJsonBody) and in time: one that gains no byte for
 * `idleTimeoutMs` is a 408 and the connection closes (the body timeout, Node's requestTimeout,
 * bounds the whole).
 */
export async function readBodyWithin(
    request: IncomingMessage,
    response: ServerResponse,
    maxBodyBytes: number,
    idleTimeoutMs: number
): Promise<unknown> {
    const reading = readJsonBody(request, maxBodyBytes);
    reading.catch(() => undefined); // when the idle timeout wins, the socket's close ends the read
    let onIdle: (() => void) | undefined;
    const idle = new Promise<never>((_resolve, reject) => {
        onIdle = () => {
            response.setHeader("Connection", "close");
            reject(
                new OpenAiError(
                    408,
                    `The request body stopped arriving: no byte for ${idleTimeoutMs.toLocaleString("en-US")} ms. Send the whole body at once.`,
                    "invalid_request_error",
                    "request_body_timeout"
                )
            );
        };
        request.setTimeout(idleTimeoutMs, onIdle);
    });
    try {
        return await Promise.race([reading, idle]);
    } finally {
        request.setTimeout(0);
        request.off("timeout", onIdle!);
    }
}
