// One remote backend as the user configured it: `--backend NAME=URL[,key-env=VAR][,model=ID]` on the
// command line, or an entry of settings.json's `backends` (the settings screen). Both are checked
// by checkBackendEntry, so the two ways in take exactly the same backends.
import { backendKeyPattern, backendNamePattern, maxBackendModelChars, maxBackendUrlChars } from "../../contract/backends.js";
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
    /** The environment variable the key was read from (never the key itself in anything shown); absent for a key of the settings. */
    readonly keyEnv?: string;
    /** The Bearer token sent upstream: read from `keyEnv` at start, or kept in settings.json. */
    readonly key?: string;
    /** The one model id to offer; absent: every model the backend's `/v1/models` lists. */
    readonly model?: string;
    /** Whether the URL reaches beyond this machine (the user said so: `,allow-remote`, or the settings' allowRemote). */
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
        return {
            ok: false,
            reason: "a backend URL takes no user, password, query or fragment (give its key apart: key-env=VAR, or the settings' key)"
        };
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

/** A backend in one line for the log: its base URL, its one model, and where its key comes from (never the key). */
export function backendSummary(config: BackendConfig): string {
    const key = config.keyEnv !== undefined ? `, key from $${config.keyEnv}` : config.key !== undefined ? ", with a key" : "";
    return `${config.apiBase}${config.model === undefined ? "" : `, model ${config.model}`}${key}`;
}

/** A backend as the user gave it, before it is checked: the parts of `--backend` or of a settings entry. */
export interface BackendEntry {
    readonly name: string;
    readonly url: string;
    readonly model?: string;
    readonly key?: string;
    /** Only for a key read from the environment: where it came from. */
    readonly keyEnv?: string;
    /** The user allows a URL beyond loopback (its chats leave this machine). */
    readonly allowRemote: boolean;
}

/** Which part of an entry is wrong: each way in words the fix in its own terms (a flag, a field of the screen). */
export type BackendEntryField = "name" | "url" | "model" | "key" | "allowRemote";

export type CheckedBackend =
    | { readonly ok: true; readonly config: BackendConfig }
    | { readonly ok: false; readonly field: BackendEntryField; readonly reason: string };

/**
 * The one set of rules for a backend, whichever way it comes in: the name's pattern, an http(s)
 * URL without credentials, a model id of 1 to 512 characters, a key safe in a header, and a URL
 * beyond loopback only when allowed. The first problem, as a value, with the part it is in.
 */
export function checkBackendEntry(entry: BackendEntry): CheckedBackend {
    if (!backendNamePattern.test(entry.name)) {
        return { ok: false, field: "name", reason: "the name is 1 to 40 letters, digits, '_' or '-'" };
    }
    if (entry.url.length > maxBackendUrlChars) {
        return {
            ok: false,
            field: "url",
            reason: `the URL has ${entry.url.length.toLocaleString("en-US")} characters; the limit is ${maxBackendUrlChars.toLocaleString("en-US")}`
        };
    }
    const urls = backendUrls(entry.url);
    if (!urls.ok) {
        return { ok: false, field: "url", reason: urls.reason };
    }
    if (entry.model !== undefined && (entry.model === "" || entry.model.length > maxBackendModelChars)) {
        return { ok: false, field: "model", reason: `the model id is empty or over ${maxBackendModelChars} characters` };
    }
    if (entry.key !== undefined && !backendKeyPattern.test(entry.key)) {
        return {
            ok: false,
            field: "key",
            reason: `the key is not 1 to 4,096 printable characters without spaces (it has ${entry.key.length.toLocaleString("en-US")} characters)`
        };
    }
    const remote = !isLoopbackHost(urls.host);
    if (remote && !entry.allowRemote) {
        return {
            ok: false,
            field: "allowRemote",
            reason: `${urls.host} is not a loopback address, so the chats of its workspaces leave this machine`
        };
    }
    return {
        ok: true,
        config: {
            name: entry.name,
            apiBase: urls.apiBase,
            root: urls.root,
            ...(entry.keyEnv === undefined ? {} : { keyEnv: entry.keyEnv }),
            ...(entry.key === undefined ? {} : { key: entry.key }),
            ...(entry.model === undefined ? {} : { model: entry.model }),
            remote
        }
    };
}

/** The first name given to two backends of `entries`, or undefined: names are unique (they route `NAME/<model id>`). */
export function repeatedBackendName(entries: readonly { readonly name: string }[]): string | undefined {
    return entries.find((entry, index) => entries.findIndex((other) => other.name === entry.name) !== index)?.name;
}
