// Kvault's client side of a remote backend's HTTP: every request bounded in time, every answer
// bounded in bytes, and every failure one of backendErrors' named errors with the numbers.
import type { BackendConfig } from "./BackendConfig.js";
import {
    backendLimits,
    BackendMalformedError,
    BackendOversizeError,
    BackendStatusError,
    BackendTimeoutError,
    BackendUnreachableError
} from "./backendErrors.js";

export interface BackendRequest {
    readonly method: "GET" | "POST";
    /** A URL of the backend: `${apiBase}/…` or `${root}/…`. */
    readonly url: string;
    /** JSON-encoded. */
    readonly body?: unknown;
    /** Aborts the request upstream (a Stop, the client gone). */
    readonly signal?: AbortSignal;
    /** How long to wait for the response headers, ms. */
    readonly timeoutMs: number;
}

/** Sends a request; resolves with a 2xx response whose body is still to be read, else rejects with a named error. */
export async function requestBackend(config: BackendConfig, request: BackendRequest): Promise<Response> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), request.timeoutMs);
    const signal = request.signal === undefined ? timeout.signal : AbortSignal.any([request.signal, timeout.signal]);
    let response: Response;
    try {
        response = await fetch(request.url, {
            method: request.method,
            headers: {
                accept: "application/json, text/event-stream, text/plain",
                ...(request.body === undefined ? {} : { "content-type": "application/json" }),
                ...(config.key === undefined ? {} : { authorization: `Bearer ${config.key}` })
            },
            body: request.body === undefined ? undefined : JSON.stringify(request.body),
            signal,
            redirect: "error"
        });
    } catch (error) {
        if (request.signal?.aborted === true) {
            throw request.signal.reason ?? error;
        }
        if (timeout.signal.aborted) {
            throw new BackendTimeoutError(
                `Backend "${config.name}" sent no response headers to ${request.method} ${request.url} within ${describeWait(request.timeoutMs)}. Check that the server runs and is not overloaded.`
            );
        }
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        throw new BackendUnreachableError(
            `Backend "${config.name}" could not be reached at ${request.url}: ${cause?.code ?? cause?.message ?? (error as Error).message}. Check the URL (--backend ${config.name}=URL) and that the server runs.`,
            { cause: error }
        );
    } finally {
        clearTimeout(timer);
    }
    if (!response.ok) {
        const detail = await readErrorDetail(response);
        throw new BackendStatusError(
            response.status,
            `Backend "${config.name}" answered ${response.status} to ${request.method} ${request.url}${detail === "" ? "" : `: ${detail}`}${statusAdvice(response.status, config)}`,
            detail
        );
    }
    return response;
}

function statusAdvice(status: number, config: BackendConfig): string {
    if (status === 401 || status === 403) {
        return config.keyEnv === undefined ? " It wants a key: give one with key-env=VAR." : ` Check the key in $${config.keyEnv}.`;
    }
    return "";
}

/** The error text of a non-2xx answer: OpenAI's `error.message`, else the text, cut to maxDetailChars. */
async function readErrorDetail(response: Response): Promise<string> {
    let text: string;
    try {
        text = new TextDecoder().decode(await readBytes(response, 64 * 1024, "error body", "backend"));
    } catch {
        return "";
    }
    let detail = text;
    try {
        const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
        const message = typeof parsed.error === "string" ? parsed.error : (parsed.error?.message ?? parsed.message);
        if (typeof message === "string") {
            detail = message;
        }
    } catch {
        // not JSON: the text as it came
    }
    detail = detail.replace(/\s+/g, " ").trim();
    return detail.length > backendLimits.maxDetailChars ? `${detail.slice(0, backendLimits.maxDetailChars)}…` : detail;
}

/** The whole body, at most `maxBytes`; more is BackendOversizeError, not a cut body. */
export async function readBytes(response: Response, maxBytes: number, what: string, name: string): Promise<Uint8Array> {
    const declared = Number(response.headers.get("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > maxBytes) {
        await response.body?.cancel().catch(() => undefined);
        throw oversize(name, what, declared, maxBytes);
    }
    const parts: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of response.body ?? []) {
        total += chunk.byteLength;
        if (total > maxBytes) {
            await response.body?.cancel().catch(() => undefined);
            throw oversize(name, what, total, maxBytes);
        }
        parts.push(chunk);
    }
    const bytes = new Uint8Array(total);
    let offset = 0;
    for (const part of parts) {
        bytes.set(part, offset);
        offset += part.byteLength;
    }
    return bytes;
}

function oversize(name: string, what: string, bytes: number, maxBytes: number): BackendOversizeError {
    return new BackendOversizeError(
        `Backend "${name}" sent a ${what} of more than ${maxBytes.toLocaleString("en-US")} bytes (at least ${bytes.toLocaleString("en-US")}); Kvault reads no more than that and stopped.`
    );
}

/** A JSON body, bounded in bytes and in time (`timeoutMs` for the whole body). */
export async function readJson(
    config: BackendConfig,
    response: Response,
    what: string,
    timeoutMs: number,
    maxBytes: number = backendLimits.maxBodyBytes
): Promise<unknown> {
    const timer = setTimeout(() => void response.body?.cancel().catch(() => undefined), timeoutMs);
    let bytes: Uint8Array;
    try {
        bytes = await readBytes(response, maxBytes, what, config.name);
    } finally {
        clearTimeout(timer);
    }
    let text: string;
    try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
        throw new BackendMalformedError(`Backend "${config.name}" sent a ${what} that is not UTF-8 (${bytes.byteLength} bytes).`);
    }
    try {
        return JSON.parse(text) as unknown;
    } catch {
        throw new BackendMalformedError(
            `Backend "${config.name}" sent a ${what} that is not JSON (${bytes.byteLength} bytes, starting ${JSON.stringify(text.slice(0, 80))}).`
        );
    }
}

/** The text of a body (Prometheus metrics), bounded as readJson's. */
export async function readText(config: BackendConfig, response: Response, what: string, timeoutMs: number): Promise<string> {
    const timer = setTimeout(() => void response.body?.cancel().catch(() => undefined), timeoutMs);
    try {
        return new TextDecoder().decode(await readBytes(response, backendLimits.maxBodyBytes, what, config.name));
    } finally {
        clearTimeout(timer);
    }
}

/** Wraps a timeout as BackendTimeoutError for a body read that stalls (used by readSseEvents). */
export function stalled(config: BackendConfig, idleMs: number): BackendTimeoutError {
    return new BackendTimeoutError(
        `Backend "${config.name}" sent nothing for ${describeWait(idleMs)} in the middle of an answer; Kvault stopped waiting. Retry, or check the server.`
    );
}

/** A wait as a person reads it: whole seconds, or milliseconds under a second (a test's tight limit). */
function describeWait(ms: number): string {
    return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}
