// The renderer's RPC: the same calls over Electron IPC (preload) and over the headless WebSocket
// (`/rpc`). Requests carry an id; results and errors answer it; turn events stream by requestId.

import type { ChatMessage, ChatTurnRequest, DraftMeasurement, EngineErrorPayload, EngineInfo, FinishReason, TurnUsage } from "./engineProtocol.js";
import type { EngineSnapshot } from "./EngineSnapshot.js";

export interface RpcMethods {
    info: { params: Record<string, never>; result: EngineInfo };
    chat: { params: ChatTurnRequest; result: { text: string; finishReason: FinishReason; usage: TurnUsage } };
    cancel: { params: { requestId: string }; result: { cancelled: boolean } };
    measure: { params: { workspace: string; messages: readonly ChatMessage[]; draft: string }; result: DraftMeasurement };
    snapshot: { params: Record<string, never>; result: EngineSnapshot };
    forgetWorkspace: { params: { workspace: string }; result: Record<string, never> };
}

export type RpcMethod = keyof RpcMethods;
export const rpcMethods: readonly RpcMethod[] = ["info", "chat", "cancel", "measure", "snapshot", "forgetWorkspace"];

export type RpcRequest = { [M in RpcMethod]: { readonly id: number; readonly method: M; readonly params: RpcMethods[M]["params"] } }[RpcMethod];

export type RpcTurnEvent =
    | { readonly event: "queued"; readonly requestId: string; readonly position: number }
    | { readonly event: "started"; readonly requestId: string }
    | { readonly event: "text"; readonly requestId: string; readonly text: string };

export type RpcServerMessage =
    | { readonly id: number; readonly result: unknown }
    | { readonly id: number | null; readonly error: EngineErrorPayload }
    | RpcTurnEvent;
