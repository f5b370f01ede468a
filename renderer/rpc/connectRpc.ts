import {
    clientErrorCodes,
    RpcClient,
    RpcError,
    WebSocketTransport,
    type ConnectionStatus,
    type KvaultRpc
} from "../../contract/rpcClient/index.js";
import { BridgeTransport } from "./BridgeTransport.js";
import { SESSION_META, SESSION_TOKEN_PARAM } from "../../contract/browserLogin.js";
import { forgetSessionToken, takeSessionToken } from "./browserSession.js";

/** What a page without a session says. */
export const NOT_LOGGED_IN =
    'Not logged in. Open the login link Kvault printed when it started (the line "Kvault login link (works once): http://…/?token=…" ' +
    "in the output of npm run serve). Each link works once; a new one is printed each time one is used.";

/**
 * The RPC for this page. Electron: the preload's `window.kvault` carries the calls. Headless: a
 * WebSocket on the page's own origin, which the browser sends the session cookie with, and which
 * carries the session's RPC token (browserSession.ts) that only this origin's page holds. The
 * server's meta tag says whether this browser has a live session cookie (never a secret).
 */
export function connectRpc(): KvaultRpc {
    if (window.kvault !== undefined) {
        return new RpcClient(new BridgeTransport(window.kvault));
    }
    const session = document.querySelector<HTMLMetaElement>(`meta[name="${SESSION_META}"]`)?.content;
    const token = takeSessionToken();
    if (session === "none") {
        forgetSessionToken();
        return new UnavailableRpc(NOT_LOGGED_IN);
    }
    if (session === "active" && token === undefined) {
        return new UnavailableRpc(NOT_LOGGED_IN);
    }
    if (session === "active" && token !== undefined && (location.protocol === "http:" || location.protocol === "https:")) {
        return new RpcClient(new WebSocketTransport(rpcUrl(location, token)));
    }
    return new UnavailableRpc("This page was not served by Kvault. Run `npm run serve` and open the login link it prints.");
}

/** `ws(s)://<the page's host>/rpc?session_token=<token>`. */
export function rpcUrl(page: Pick<Location, "protocol" | "host">, token: string): string {
    return `${page.protocol === "https:" ? "wss:" : "ws:"}//${page.host}/rpc?${SESSION_TOKEN_PARAM}=${encodeURIComponent(token)}`;
}

/** The RPC of a page with no way to an engine: every call says why. */
class UnavailableRpc implements KvaultRpc {
    readonly status: ConnectionStatus;

    constructor(reason: string) {
        this.status = { kind: "unavailable", reason };
    }

    onStatus(): () => void {
        return () => undefined;
    }

    call(): Promise<never> {
        return Promise.reject(this.#error());
    }

    chat(): Promise<never> {
        return Promise.reject(this.#error());
    }

    attach(): Promise<never> {
        return Promise.reject(this.#error());
    }

    dispose(): void {}

    #error(): RpcError {
        return new RpcError(clientErrorCodes.notConnected, this.status.kind === "unavailable" ? this.status.reason : "Not connected.");
    }
}
