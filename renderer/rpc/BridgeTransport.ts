import type { KvaultBridge } from "../../contract/KvaultBridge.js";
import type { RpcRequest } from "../../contract/rpc.js";
import type { RpcTransport, RpcTransportHandlers } from "../../contract/rpcClient/index.js";

/**
 * The RPC over Electron's preload (`window.kvault`): each request becomes one `bridge.call(method,
 * params)`, its `BridgeResult` the `{id, result}` or `{id, error}` the WebSocket would have sent,
 * and turn events arrive as they do there. The rest of the renderer cannot tell the hosts apart.
 */
export class BridgeTransport implements RpcTransport {
    #handlers: RpcTransportHandlers | undefined;
    #unsubscribe: (() => void) | undefined;
    #disposed = false;

    constructor(private readonly bridge: KvaultBridge) {}

    start(handlers: RpcTransportHandlers): void {
        this.#handlers = handlers;
        this.#unsubscribe = this.bridge.onTurnEvent((event) => handlers.onMessage(event));
        handlers.onOpen();
    }

    send(request: RpcRequest): boolean {
        if (this.#disposed || this.#handlers === undefined) {
            return false;
        }
        const handlers = this.#handlers;
        this.bridge.call(request.method, request.params).then(
            (answer) => {
                if (!this.#disposed) {
                    handlers.onMessage(answer.ok ? { id: request.id, result: answer.value } : { id: request.id, error: answer.error });
                }
            },
            (error: unknown) => {
                if (!this.#disposed) {
                    handlers.onMessage({
                        id: request.id,
                        error: { code: "bridge_refused", message: error instanceof Error ? error.message : String(error) }
                    });
                }
            }
        );
        return true;
    }

    dispose(): void {
        if (this.#disposed) {
            return;
        }
        this.#disposed = true;
        this.#unsubscribe?.();
        this.#handlers?.onClose(false, 0);
    }
}
