// The renderer's RPC on the wire: the same calls over Electron IPC (the preload's `call`) and over
// the headless WebSocket (`/rpc`). Requests carry an id; results and errors answer it; turn events
// stream by requestId. The methods, their params and results are contract/rpc/rpcSpec.ts's.

import type { EngineErrorPayload } from "./engineProtocol.js";
import type { RpcMethod, RpcParams, RpcResult } from "./rpc/rpcSpec.js";
import type { TurnEvent } from "./turnEvents.js";

export type { ActiveTurn, ChatTurnResult, EngineMethod, HostMethod, RpcMethod, RpcParams, RpcResult, TurnMethod } from "./rpc/rpcSpec.js";
export { engineMethods, rpcMethods } from "./rpc/rpcSpec.js";

/** Each method's params and result, by name: `RpcMethods["audit"]["result"]`. */
export type RpcMethods = { [M in RpcMethod]: { params: RpcParams<M>; result: RpcResult<M> } };

export type RpcRequest = {
    [M in RpcMethod]: { readonly id: number; readonly method: M; readonly params: RpcParams<M> };
}[RpcMethod];

/** A call's answer: its value, or a failure with a stable code (BridgeResult over IPC, `{id, …}` over the WebSocket). */
export type RpcAnswer<T = unknown> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: EngineErrorPayload };

export type RpcServerMessage =
    | { readonly id: number; readonly result: unknown }
    | { readonly id: number | null; readonly error: EngineErrorPayload }
    /** A turn's event, to the page that follows the turn, as the engine sent it. */
    | TurnEvent;
