// One remote backend as the user configured it: `--backend NAME=URL[,key-env=VAR][,model=ID]`.
import { isLoopbackHost } from "../headless/serveOptions.js";

export interface BackendConfig {
    /** What the UI and Kvault's own `/v1/models` call it (`NAME/<model id>`): 1 to 40 letters, digits, '_' or '-'. */
    readonly name: string;
    /**
     * The OpenAI-compatible base URL, as an OpenAI client's `baseURL`, without a trailing '/':
     * `…/v1/chat/completions` is `${apiBase}/chat/completions`. A URL given with no path gets `/v1`.
     */
    readonly apiBase: string;
    /** The server's root (apiBase without a final `/v1`), where llama.cpp's `/props`, `/tokenize` and `/metrics` are. */
    readonly root: string;
    /** The environment variable the key was read from (never the key itself in anything shown). */
    readonly keyEnv?: string;
    /** The Bearer token sent upstream; read from `keyEnv` at start. */
    readonly key?: string;
    /** The one model id to offer; absent: every model the backend's `/v1/models` lists. */
    readonly model?: string;
    /** Whether the URL reaches beyond this machine (the user said so with --allow-remote-backend). */
    readonly remote: boolean;
}

/** The base URL and root of `url`, or why it cannot be a backend's URL. */
export function backendUrls(url: string): { ok: true; apiBase: string; root: string; host: string } | { ok: false; reason: string } {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        return { ok: false, reason: `"${url.slice(0, 200)}" is not a URL` };
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
        return { ok: false, reason: `${parsed.protocol} is not http: or https:` };
    }
    if (parsed.username !== "" || parsed.password !== "" || parsed.search !== "" || parsed.hash !== "") {
        return { ok: false, reason: "a backend URL takes no user, password, query or fragment (give a key with key-env=VAR)" };
    }
    const pathname = parsed.pathname.replace(/\/+$/, "");
    const apiPath = pathname === "" ? "/v1" : pathname;
    const rootPath = apiPath.endsWith("/v1") ? apiPath.slice(0, -"/v1".length) : apiPath;
    const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
    return { ok: true, apiBase: `${parsed.origin}${apiPath}`, root: `${parsed.origin}${rootPath}`, host };
}

/** Whether the URL's host is this machine only. */
export function isLoopbackUrl(url: string): boolean {
    const urls = backendUrls(url);
    return urls.ok && isLoopbackHost(urls.host);
}
