// The renderer's RPC: the same calls over Electron IPC (preload) and over the headless WebSocket
// (`/rpc`). Requests carry an id; results and errors answer it; turn events stream by requestId.

import type { ChatMessage, ChatTurnRequest, DraftMeasurement, EngineErrorPayload, EngineInfo, FinishReason, TurnUsage } from "./engineProtocol.js";
import type { EngineSnapshot } from "./EngineSnapshot.js";
import type { AuditSummary, DrillDescription, DrillReport, ReplayableTurn, ReplaySummary } from "./isolation.js";
import type { ModelDownload, ModelFacts } from "./models.js";

export interface RpcMethods {
    info: { params: Record<string, never>; result: EngineInfo };
    chat: { params: ChatTurnRequest; result: { text: string; finishReason: FinishReason; usage: TurnUsage } };
    cancel: { params: { requestId: string }; result: { cancelled: boolean } };
    measure: { params: { workspace: string; messages: readonly ChatMessage[]; draft: string }; result: DraftMeasurement };
    snapshot: { params: Record<string, never>; result: EngineSnapshot };
    forgetWorkspace: { params: { workspace: string }; result: Record<string, never> };
    /** I1–I7 over the whole engine, now. */
    audit: { params: Record<string, never>; result: AuditSummary };
    /** Finished greedy turns the engine keeps for replay, oldest first. */
    replayableTurns: { params: Record<string, never>; result: readonly ReplayableTurn[] };
    /** Differential replay of the turn sent with this requestId; fails with replay_unavailable when it is not kept. */
    replay: { params: { requestId: string }; result: ReplaySummary };
    listDrills: { params: Record<string, never>; result: readonly DrillDescription[] };
    /** Runs the fault drill `id` in sandboxed engines (seconds); fails with unknown_drill for an id not listed. */
    runDrill: { params: { id: string }; result: DrillReport };
    /** A GGUF file's facts and memory estimate, read from its header; fails with model_unreadable, model_not_gguf or model_unsupported. */
    inspectModel: { params: { path: string }; result: ModelFacts };
    /** Loads `model` (a GGUF path on the host, or "tiny"); running turns end with model_switched. */
    switchModel: { params: { model: string }; result: EngineInfo };
    /** Starts downloading an http(s) URL or an `hf:` reference into the host's models directory; fails with download_source_invalid. */
    startDownload: { params: { source: string }; result: ModelDownload };
    /** Every download since the host started, oldest first. */
    listDownloads: { params: Record<string, never>; result: readonly ModelDownload[] };
    /** Cancels a running download (its partial file is deleted); fails with download_unknown. */
    cancelDownload: { params: { id: string }; result: ModelDownload };
}

/** Longest model path or name the RPC takes (characters). */
export const MAX_MODEL_PATH_CHARS = 4096;

export type RpcMethod = keyof RpcMethods;
export const rpcMethods: readonly RpcMethod[] = [
    "info", "chat", "cancel", "measure", "snapshot", "forgetWorkspace", "audit", "replayableTurns", "replay", "listDrills", "runDrill", "inspectModel", "switchModel",
    "startDownload", "listDownloads", "cancelDownload"
];

export type RpcRequest = { [M in RpcMethod]: { readonly id: number; readonly method: M; readonly params: RpcMethods[M]["params"] } }[RpcMethod];

export type RpcTurnEvent =
    | { readonly event: "queued"; readonly requestId: string; readonly position: number }
    | { readonly event: "started"; readonly requestId: string }
    | { readonly event: "text"; readonly requestId: string; readonly text: string };

export type RpcServerMessage =
    | { readonly id: number; readonly result: unknown }
    | { readonly id: number | null; readonly error: EngineErrorPayload }
    | RpcTurnEvent;
