import type { ConnectionStatus, KvaultRpc } from "./KvaultRpc.js";
import { RpcClient } from "./RpcClient.js";
import { clientErrorCodes, RpcError } from "./RpcError.js";
import { BridgeTransport } from "./BridgeTransport.js";
import { WebSocketTransport } from "./WebSocketTransport.js";

/**
 * The meta tag the headless server adds to index.html (host/http/serveUi.ts): "active" when this
 * browser has a login session, "none" when not. Never a secret: the session is an HttpOnly cookie.
 */
const SESSION_META = "kvault-session";

/** What a page without a session says. */
export const NOT_LOGGED_IN =
    'Not logged in. Open the login link Kvault printed when it started (the line "Kvault login link (works once): http://…/?token=…" ' +
    "in the output of npm run serve). Each link works once; a new one is printed each time one is used.";

/**
 * The RPC for this page. Electron: the preload's `window.kvault` carries the calls. Headless: a
 * WebSocket on the page's own origin, which the browser sends the session cookie with.
 */
export function connectRpc(): KvaultRpc {
    if (window.kvault !== undefined) {
        return new RpcClient(new BridgeTransport(window.kvault));
    }
    const session = document.querySelector<HTMLMetaElement>(`meta[name="${SESSION_META}"]`)?.content;
    if (session === "none") {
        return new UnavailableRpc(NOT_LOGGED_IN);
    }
    if (session === "active" && (location.protocol === "http:" || location.protocol === "https:")) {
        return new RpcClient(new WebSocketTransport(rpcUrl(location)));
    }
    return new UnavailableRpc("This page was not served by Kvault. Run `npm run serve` and open the login link it prints.");
}

/** `ws(s)://<the page's host>/rpc`. */
export function rpcUrl(page: Pick<Location, "protocol" | "host">): string {
    return `${page.protocol === "https:" ? "wss:" : "ws:"}//${page.host}/rpc`;
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
