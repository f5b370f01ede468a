import { CliError } from "./CliError.js";
import { exitCodes } from "./exitCodes.js";

/** How long a request that is not a stream may take before the command gives up on the server. */
const REQUEST_TIMEOUT_MS = 30_000;
/** The most bytes of an error answer read to show its message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface KvaultClientOptions {
    /** The server's base URL, e.g. http://127.0.0.1:8080 (no /v1). */
    readonly url: string;
    /** The API key (KVAULT_API_KEY, --api-key); requests go without one when absent and the server says 401. */
    readonly apiKey: string | undefined;
}

/**
 * The `kvault` command's side of a running Kvault: JSON over HTTP with the key, each failure a
 * CliError saying what to do (no server at the URL: exit 3; a refused key: exit 4).
 */
export class KvaultClient {
    readonly baseUrl: string;

    constructor(readonly options: KvaultClientOptions) {
        this.baseUrl = options.url.replace(/\/+$/, "").replace(/\/v1$/, "");
    }

    headers(extra: Record<string, string> = {}): Record<string, string> {
        return {
            ...(this.options.apiKey === undefined ? {} : { authorization: `Bearer ${this.options.apiKey}` }),
            ...extra
        };
    }

    async getJson<T>(route: string): Promise<T> {
        const response = await this.fetch(route, { method: "GET", signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        return (await response.json()) as T;
    }

    async getText(route: string): Promise<string> {
        const response = await this.fetch(route, { method: "GET", signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        return await response.text();
    }

    /** Sends a request; a network failure or an answer that is not 2xx is a CliError with the server's own message. */
    async fetch(route: string, init: RequestInit): Promise<Response> {
        let response: Response;
        try {
            response = await fetch(`${this.baseUrl}${route}`, { ...init, headers: this.headers(init.headers as Record<string, string>) });
        } catch (error) {
            if (init.signal?.aborted === true && (init.signal.reason as Error | undefined)?.name !== "TimeoutError") {
                throw error;
            }
            const why = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
            throw new CliError(
                `No Kvault answered at ${this.baseUrl} (${why}). Start one with \`kvault serve\`, or give its address with --url or KVAULT_URL.`,
                "server_unreachable",
                exitCodes.unreachable
            );
        }
        if (!response.ok) {
            throw await answerError(response, this.baseUrl);
        }
        return response;
    }
}

async function answerError(response: Response, baseUrl: string): Promise<CliError> {
    const text = await readSome(response);
    let message = text.trim().slice(0, 500);
    try {
        const body = JSON.parse(text) as { error?: string | { message?: string } };
        message = typeof body.error === "string" ? body.error : (body.error?.message ?? message);
    } catch {
        // not JSON: the text itself is the message
    }
    if (response.status === 401) {
        return new CliError(
            `Kvault at ${baseUrl} refused the API key (401: ${message}). Give the key \`kvault serve\` printed with --api-key or KVAULT_API_KEY.`,
            "key_refused",
            exitCodes.refused
        );
    }
    return new CliError(`Kvault answered ${response.status}: ${message}`, "server_error", exitCodes.failed);
}

async function readSome(response: Response): Promise<string> {
    const reader = response.body?.getReader();
    if (reader === undefined) {
        return "";
    }
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    while (bytes < MAX_ERROR_BODY_BYTES) {
        const { done, value } = await reader.read();
        if (done) {
            break;
        }
        chunks.push(value);
        bytes += value.byteLength;
    }
    await reader.cancel().catch(() => undefined);
    return Buffer.concat(chunks).toString("utf8");
}
