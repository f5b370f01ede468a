import type { ChatTurnRequest } from "../engineProtocol.js";
import type { RpcMethod, RpcMethods } from "../rpc.js";
import type { TurnListener } from "../turnEvents.js";

/**
 * Where a client stands with its server. `unavailable` is final: this client has no way to
 * reach an engine (a page with no key and no Electron bridge, a connection that does not
 * reconnect and closed), with `reason` saying why.
 */
export type ConnectionStatus =
    | { readonly kind: "connecting" }
    | { readonly kind: "open" }
    | { readonly kind: "reconnecting"; readonly attempt: number }
    | { readonly kind: "unavailable"; readonly reason: string };

/** A turn's progress before its result (queue position, start, text as it streams, MCP tool calls), as the host sent it. */
export type { TurnListener } from "../turnEvents.js";

/** Every method but `chat` and `attachTurn`, which stream and so have their own calls. */
export type PlainRpcMethod = Exclude<RpcMethod, "chat" | "attachTurn">;

/** What one call may say beyond its params. */
export interface RpcCallOptions {
    /** Rejects with rpc_timeout when no answer came within this many milliseconds; the client's own limit, or none, when absent. */
    readonly timeoutMs?: number;
}

/** A chat turn's request as a client sends it: the engine's turn, and where its answer goes in the chat's tree. */
export type ChatCallRequest = ChatTurnRequest & { readonly answerId?: string; readonly answerParent?: string | null };

/**
 * A client's one way to the host (contract/rpc.ts): the renderer's, the `kvault` command's and the
 * tests'. Implemented by RpcClient over a transport: a WebSocket (a headless page, node), the
 * preload bridge in Electron. Calls reject with an RpcError.
 */
export interface KvaultRpc {
    readonly status: ConnectionStatus;
    /** Calls `listener` on every status change; returns the unsubscribe. */
    onStatus(listener: (status: ConnectionStatus) => void): () => void;
    call<M extends PlainRpcMethod>(method: M, params: RpcMethods[M]["params"], options?: RpcCallOptions): Promise<RpcMethods[M]["result"]>;
    /** One chat turn; `listener` hears its events until the promise settles. */
    chat(request: ChatCallRequest, listener: TurnListener, options?: RpcCallOptions): Promise<RpcMethods["chat"]["result"]>;
    /** Follows a chat's turn that runs on the host (activeTurns): `listener` hears the text so far, then the rest, until the promise settles. */
    attach(requestId: string, listener: TurnListener): Promise<RpcMethods["attachTurn"]["result"]>;
    dispose(): void;
}
