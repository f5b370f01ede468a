import crypto from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ApiKeys } from "./ApiKeys.js";
import { OpenAiError } from "./OpenAiError.js";

/** The Host values this server answers to: its own address and the loopback names, with its port. Anything else is DNS rebinding. */
export function allowedHosts(boundHost: string, port: number): Set<string> {
    const names = new Set(["127.0.0.1", "localhost", "[::1]"]);
    names.add(boundHost.includes(":") && !boundHost.startsWith("[") ? `[${boundHost}]` : boundHost);
    return new Set([...names].map((name) => `${name}:${port}`.toLowerCase()));
}

export function checkHost(request: IncomingMessage, allowed: ReadonlySet<string>): void {
    const host = (request.headers.host ?? "").toLowerCase();
    if (!allowed.has(host)) {
        throw new OpenAiError(
            403,
            `The Host header "${host.slice(0, 100)}" is not this server's address. Kvault answers only to ${[...allowed].join(", ")}.`,
            "permission_error",
            "host_not_allowed"
        );
    }
}

/** Browsers send Origin; a page of another origin may not drive the API (no CORS is ever granted). */
export function checkOrigin(request: IncomingMessage, ownOrigins: ReadonlySet<string>): void {
    const origin = request.headers.origin;
    if (origin !== undefined && !ownOrigins.has(origin.toLowerCase())) {
        throw new OpenAiError(
            403,
            `Requests from ${origin.slice(0, 100)} are not allowed: Kvault's API serves only its own pages and non-browser clients.`,
            "permission_error",
            "origin_not_allowed"
        );
    }
}

/**
 * A request that a login session authorizes (the RPC's WebSocket, log out) must come from this
 * server's own page: an Origin present and equal to `http://` and the (already checked) Host. A
 * missing one is refused too: whatever replays a session cookie from outside a browser sends none.
 */
export function checkOwnOrigin(request: IncomingMessage): void {
    const origin = request.headers.origin;
    const own = `http://${(request.headers.host ?? "").toLowerCase()}`;
    if (origin?.toLowerCase() !== own) {
        throw new OpenAiError(
            403,
            origin === undefined
                ? `A login session is taken only from this server's own page (Origin ${own}); this request sent no Origin. API clients use the API key (/rpc?key=…).`
                : `A login session is taken only from this server's own page (Origin ${own}), not from ${origin.slice(0, 100)}.`,
            "permission_error",
            "origin_not_own"
        );
    }
}

/** Refuses (401) a request that does not carry the default key: the RPC and `/metrics` see every workspace. */
export function checkApiKey(request: IncomingMessage, apiKey: string): void {
    const { given, match } = presentedKey(request);
    if (!isKey(given, apiKey)) {
        throw keyRefused(match);
    }
}

/**
 * Which key the request carries: `{ keyId: undefined }` for the default key, the namespace
 * (`ID~GENERATION`, ApiKeys.namespaceOf) of one of `extraKeys`, or a 401 (a revoked key is an
 * unknown one). The namespace, not the id, stands for the key from here on: a key made later under
 * the same id is another key.
 */
export function identifyApiKey(
    request: IncomingMessage,
    response: ServerResponse,
    apiKey: string,
    extraKeys: ApiKeys | undefined
): { keyId: string | undefined } {
    const { given, match } = presentedKey(request);
    if (isKey(given, apiKey)) {
        return { keyId: undefined };
    }
    const keyId = extraKeys?.identify(given.toString("utf8"));
    if (keyId === undefined) {
        throw keyRefused(match);
    }
    extraKeys?.hold(keyId, response); // revoking the key ends this answer, and a stream open in it
    return { keyId: extraKeys?.namespaceOf(keyId) };
}

/** The key in `Authorization: Bearer <key>`, else in `X-Api-Key` (Anthropic-style clients send it there); the same keys either way. */
function presentedKey(request: IncomingMessage): { given: Buffer; match: RegExpExecArray | null } {
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? "");
    const header = request.headers["x-api-key"];
    const match = bearer ?? (typeof header === "string" && header.trim() !== "" ? /^(.+)$/.exec(header.trim()) : null);
    return { given: Buffer.from(match?.[1]?.trim() ?? ""), match };
}

function isKey(given: Buffer, apiKey: string): boolean {
    const expected = Buffer.from(apiKey);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

function keyRefused(match: RegExpExecArray | null): OpenAiError {
    return new OpenAiError(
        401,
        match === null
            ? 'No API key given. Send it as "Authorization: Bearer <key>" (or "X-Api-Key: <key>"); the key is printed when Kvault starts, or set with --api-key / KVAULT_API_KEY.'
            : "Incorrect API key: it is not one this server knows, or it was revoked. Use the key printed when Kvault started, the one set with --api-key / KVAULT_API_KEY, or one given with --extra-api-key.",
        "authentication_error",
        "invalid_api_key"
    );
}

/** Reads a JSON body of at most `maxBytes`; larger is a 413, never a truncated parse. */
export async function readJsonBody(request: IncomingMessage, maxBytes: number): Promise<unknown> {
    const declared = Number(request.headers["content-length"] ?? "0");
    if (declared > maxBytes) {
        throw new OpenAiError(
            413,
            `The request body is ${declared.toLocaleString("en-US")} bytes; the limit is ${maxBytes.toLocaleString("en-US")}.`,
            "invalid_request_error",
            "request_too_large"
        );
    }
    const chunks: Buffer[] = [];
    let numBytes = 0;
    for await (const chunk of request) {
        numBytes += (chunk as Buffer).length;
        if (numBytes > maxBytes) {
            throw new OpenAiError(
                413,
                `The request body exceeds the limit of ${maxBytes.toLocaleString("en-US")} bytes.`,
                "invalid_request_error",
                "request_too_large"
            );
        }
        chunks.push(chunk as Buffer);
    }
    // JSON travels as UTF-8 (RFC 8259); bytes that are not UTF-8 are refused, never replaced with U+FFFD.
    const body = Buffer.concat(chunks);
    let text: string;
    try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(body);
    } catch {
        throw new OpenAiError(
            400,
            `The request body (${body.length.toLocaleString("en-US")} bytes) is not valid UTF-8; send JSON encoded as UTF-8.`,
            "invalid_request_error",
            "invalid_encoding"
        );
    }
    try {
        return JSON.parse(text);
    } catch (error) {
        throw new OpenAiError(
            400,
            `The request body is not valid JSON: ${(error as Error).message}`,
            "invalid_request_error",
            "invalid_json"
        );
    }
}
