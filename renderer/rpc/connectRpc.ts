import type { ConnectionStatus, KvaultRpc } from "./KvaultRpc.js";
import { RpcClient } from "./RpcClient.js";
import { clientErrorCodes, RpcError } from "./RpcError.js";
import { BridgeTransport } from "./BridgeTransport.js";
import { WebSocketTransport } from "./WebSocketTransport.js";

/** The meta tag the headless server adds to index.html (host/http/KvaultHttpServer.ts). */
const API_KEY_META = "kvault-api-key";

/**
 * The RPC for this page. Electron: the preload's `window.kvault` carries the calls. Headless: the
 * server put the API key in the page, and the RPC is a WebSocket on the same origin.
 */
export function connectRpc(): KvaultRpc {
    if (window.kvault !== undefined) {
        return new RpcClient(new BridgeTransport(window.kvault));
    }
    const key = document.querySelector<HTMLMetaElement>(`meta[name="${API_KEY_META}"]`)?.content ?? "";
    if (key !== "" && (location.protocol === "http:" || location.protocol === "https:")) {
        return new RpcClient(new WebSocketTransport(rpcUrl(location, key)));
    }
    return new UnavailableRpc(
        "This page was not served by Kvault (it carries no API key). Run `npm run serve` and open the address it prints."
    );
}

/** `ws(s)://<the page's host>/rpc?key=…`. */
export function rpcUrl(page: Pick<Location, "protocol" | "host">, key: string): string {
    return `${page.protocol === "https:" ? "wss:" : "ws:"}//${page.host}/rpc?key=${encodeURIComponent(key)}`;
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

    dispose(): void {}

    #error(): RpcError {
        return new RpcError(clientErrorCodes.notConnected, this.status.kind === "unavailable" ? this.status.reason : "Not connected.");
    }
}
