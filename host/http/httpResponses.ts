import type { ServerResponse } from "node:http";
import type { OpenAiError } from "./OpenAiError.js";
import { noteRequest } from "./RequestLog.js";
import type { StreamWriter } from "./StreamWriter.js";

/** The headers every response carries: no MIME sniffing, no Referer, and no page of another site may frame Kvault's (clickjacking). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "frame-ancestors 'none'"
};

export function setSecurityHeaders(response: ServerResponse): void {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
        response.setHeader(name, value);
    }
}

/** One server-sent event of a streamed (chat) completion, through the response's StreamWriter: its promise settles once the client has taken it. */
export function writeEvent(writer: StreamWriter, body: Record<string, unknown>): Promise<void> {
    return writer.write(`data: ${JSON.stringify(body)}\n\n`);
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    response.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(text) });
    response.end(text);
}

export function sendText(response: ServerResponse, status: number, text: string, contentType: string): void {
    response.writeHead(status, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(text) });
    response.end(text);
}

/** The error in OpenAI's shape; a cancelled request (499, nginx's) travels as a 400. */
export function sendError(response: ServerResponse, error: OpenAiError): void {
    noteRequest(response, { outcome: error.code ?? error.type });
    if (error.retryAfterSeconds !== undefined) {
        response.setHeader("Retry-After", String(error.retryAfterSeconds));
    }
    sendJson(response, error.status === 499 ? 400 : error.status, error.body());
}
