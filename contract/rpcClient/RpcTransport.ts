import type { RpcRequest } from "../rpc.js";

export interface RpcTransportHandlers {
    onOpen(): void;
    /** One message from the server, parsed from JSON but not yet checked. */
    onMessage(message: unknown): void;
    /** The connection closed; `willRetry` when the transport reconnects by itself. */
    onClose(willRetry: boolean, attempt: number): void;
}

/**
 * Moves RPC messages to and from a server. The seam between hosts and clients: WebSocketTransport in headless
 * mode, BridgeTransport over the preload's `call` (contract/KvaultBridge.ts) in Electron.
 * Everything above (RpcClient, stores, UI) stays the same.
 */
export interface RpcTransport {
    start(handlers: RpcTransportHandlers): void;
    /**
     * Sends one request; false when the connection is not open (nothing was sent). Throws an
     * RpcError for a request that cannot be sent at all (rpc_message_too_large: over rpcLimits).
     */
    send(request: RpcRequest): boolean;
    dispose(): void;
}
