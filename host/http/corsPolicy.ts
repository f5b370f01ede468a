// CORS as an explicit allow-list (off by default): pages of the origins given with --cors-origin
// may call the API (/v1/, Ollama's /api/, /tokenize, /detokenize) from a browser; every other
// origin is refused as before, and the RPC, /metrics and the app's pages are never cross-origin.
import type { IncomingMessage, ServerResponse } from "node:http";

/** Headers a cross-origin API client may send: the key (either way), the body's type, the workspace. */
const allowedHeaders = "Authorization, Content-Type, X-Api-Key, X-Kvault-Workspace";
const preflightMaxAgeSeconds = 600;

/** Whether a path is the API's, the only part CORS may open. */
export function isCorsPath(pathname: string): boolean {
    return pathname.startsWith("/v1/") || pathname.startsWith("/api/") || pathname === "/tokenize" || pathname === "/detokenize";
}

/** `http(s)://host[:port]`, lower-cased, as browsers send Origin; undefined for anything else (a path, a query, another scheme). */
export function normalizeOrigin(text: string): string | undefined {
    let url: URL;
    try {
        url = new URL(text);
    } catch {
        return undefined;
    }
    if (
        (url.protocol !== "http:" && url.protocol !== "https:") ||
        url.pathname !== "/" ||
        url.search !== "" ||
        url.hash !== "" ||
        url.username !== ""
    ) {
        return undefined;
    }
    return url.origin.toLowerCase();
}

export class CorsPolicy {
    readonly #origins: ReadonlySet<string>;

    /** `origins` already normalized (serveOptions checks each --cors-origin); empty is off. */
    constructor(origins: readonly string[]) {
        this.#origins = new Set(origins.map((origin) => origin.toLowerCase()));
    }

    /** The request's Origin when the allow-list grants it this path; undefined otherwise (no Origin, another one, not the API). */
    grantedOrigin(request: IncomingMessage, pathname: string): string | undefined {
        const origin = request.headers.origin;
        return origin !== undefined && this.#origins.has(origin.toLowerCase()) && isCorsPath(pathname) ? origin : undefined;
    }

    /** The headers every answer to a granted origin carries. */
    allow(response: ServerResponse, origin: string): void {
        response.setHeader("Access-Control-Allow-Origin", origin);
        response.setHeader("Vary", "Origin");
        response.setHeader("Access-Control-Expose-Headers", "Retry-After");
    }

    /** A granted preflight: 204 with the methods and headers the API takes. */
    answerPreflight(response: ServerResponse, origin: string): void {
        this.allow(response, origin);
        response.writeHead(204, {
            "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
            "Access-Control-Allow-Headers": allowedHeaders,
            "Access-Control-Max-Age": String(preflightMaxAgeSeconds)
        });
        response.end();
    }
}
