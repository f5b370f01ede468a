import type { ChatTurnRequest } from "../../contract/engineProtocol.js";
import type { RpcMethod, RpcMethods } from "../../contract/rpc.js";
import type { TurnEventListener } from "../../contract/turnEvents.js";

/**
 * Where the renderer stands with its server. `unavailable` is final: this page has no way to
 * reach an engine (no key in the page and no Electron bridge), with `reason` saying why.
 */
export type ConnectionStatus =
    | { readonly kind: "connecting" }
    | { readonly kind: "open" }
    | { readonly kind: "reconnecting"; readonly attempt: number }
    | { readonly kind: "unavailable"; readonly reason: string };

/** A turn's progress before its result (queue position, start, text as it streams, MCP tool calls), as the host sent it. */
export type TurnListener = TurnEventListener;

/** Every method but `chat` and `attachTurn`, which stream and so have their own calls. */
export type PlainRpcMethod = Exclude<RpcMethod, "chat" | "attachTurn">;

/**
 * The renderer's one way to the engine (contract/rpc.ts). Implemented by RpcClient over a
 * transport: a WebSocket in headless mode, the preload bridge in Electron. Calls reject with an
 * RpcError.
 */
export interface KvaultRpc {
    readonly status: ConnectionStatus;
    /** Calls `listener` on every status change; returns the unsubscribe. */
    onStatus(listener: (status: ConnectionStatus) => void): () => void;
    call<M extends PlainRpcMethod>(method: M, params: RpcMethods[M]["params"]): Promise<RpcMethods[M]["result"]>;
    /** One chat turn; `listener` hears its events until the promise settles. */
    chat(
        request: ChatTurnRequest & { readonly answerId?: string; readonly answerParent?: string | null },
        listener: TurnListener
    ): Promise<RpcMethods["chat"]["result"]>;
    /** Follows a chat's turn that runs on the host (activeTurns): `listener` hears the text so far, then the rest, until the promise settles. */
    attach(requestId: string, listener: TurnListener): Promise<RpcMethods["attachTurn"]["result"]>;
    dispose(): void;
}
