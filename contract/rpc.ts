// The renderer's RPC: the same calls over Electron IPC (preload) and over the headless WebSocket
// (`/rpc`). Requests carry an id; results and errors answer it; turn events stream by requestId.

import type {
    ChatMessage,
    ChatTurnRequest,
    DraftMeasurement,
    EngineErrorPayload,
    EngineInfo,
    FinishReason,
    TurnUsage
} from "./engineProtocol.js";
import type { EngineSnapshot } from "./EngineSnapshot.js";
import type { AuditSummary, CanaryReport, DrillDescription, DrillReport, ReplayableTurn, ReplaySummary } from "./isolation.js";
import type { ModelDownload, ModelFacts, ModelLibraryListing } from "./models.js";
import type { LoadedWorkspaces, StoredMessage, WorkspaceMeta } from "./workspaces.js";

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
    /**
     * The canary probe on the loaded model, in two temporary workspaces (tens of seconds on a CPU);
     * `fillerTokens` sizes A's prompt (default: from the window and free pages). Fails with canary_running while one runs.
     */
    runCanary: { params: { fillerTokens?: number }; result: CanaryReport };
    /** A GGUF file's facts and memory estimate, read from its header; fails with model_unreadable, model_not_gguf or model_unsupported. */
    inspectModel: { params: { path: string }; result: ModelFacts };
    /** Loads `model` (a GGUF path on the host, or "tiny"); running turns end with model_switched. */
    switchModel: { params: { model: string }; result: EngineInfo };
    /** Starts downloading an http(s) URL or an `hf:` reference into the host's models directory; fails with download_source_invalid. */
    startDownload: { params: { source: string }; result: ModelDownload };
    /** Every download since the host started, and the partial ones an earlier start left (failed, resumable), oldest first. */
    listDownloads: { params: Record<string, never>; result: readonly ModelDownload[] };
    /** Cancels a running download, or discards a resumable one (its partial file is deleted); fails with download_unknown. */
    cancelDownload: { params: { id: string }; result: ModelDownload };
    /** Continues a failed download from the bytes on disk (or from zero, saying why in `notice`); fails with download_unknown or download_not_resumable. */
    resumeDownload: { params: { id: string }; result: ModelDownload };
    /** The model library: every model opened by path or downloaded, with its facts, most recently used first. */
    listModels: { params: Record<string, never>; result: ModelLibraryListing };
    /** Removes a library entry; `deleteFile` also deletes a downloaded model's file. Fails with library_model_unknown, library_file_not_owned or library_model_in_use. */
    forgetModel: { params: { id: string; deleteFile?: boolean }; result: ModelLibraryListing };
    /** The workspaces and chats the host keeps on disk, and what it set aside as damaged when it started (contract/workspaces.ts). */
    loadWorkspaces: { params: Record<string, never>; result: LoadedWorkspaces };
    /** Once, after an upgrade: the renderer's old localStorage document (format 1). Takes nothing (numImported 0) when the host has workspaces already. */
    importWorkspaces: { params: { document: string }; result: LoadedWorkspaces & { numImported: number } };
    /** Creates a workspace (at the end) or changes its name, colour or settings; fails with store_write_failed or store_limit_exceeded. */
    saveWorkspace: { params: { workspace: WorkspaceMeta }; result: Record<string, never> };
    /** Deletes a workspace and its chat file; the selection moves to a neighbour. */
    removeWorkspace: { params: { workspace: string }; result: Record<string, never> };
    selectWorkspace: { params: { workspace: string }; result: Record<string, never> };
    /** Appends one message to a workspace's chat, on disk (fsync) before it answers; fails with workspace_not_found. */
    appendMessage: { params: { workspace: string; message: StoredMessage }; result: Record<string, never> };
    /** Regenerate: drops the chat's last message if it is the answer `messageId`. */
    dropLastAnswer: { params: { workspace: string; messageId: string }; result: { dropped: boolean } };
    clearChat: { params: { workspace: string }; result: Record<string, never> };
}

/** Longest model path or name the RPC takes (characters). */
export const MAX_MODEL_PATH_CHARS = 4096;

export type RpcMethod = keyof RpcMethods;
export const rpcMethods: readonly RpcMethod[] = [
    "info",
    "chat",
    "cancel",
    "measure",
    "snapshot",
    "forgetWorkspace",
    "audit",
    "replayableTurns",
    "replay",
    "listDrills",
    "runDrill",
    "inspectModel",
    "switchModel",
    "startDownload",
    "listDownloads",
    "cancelDownload",
    "resumeDownload",
    "listModels",
    "forgetModel",
    "runCanary",
    "loadWorkspaces",
    "importWorkspaces",
    "saveWorkspace",
    "removeWorkspace",
    "selectWorkspace",
    "appendMessage",
    "dropLastAnswer",
    "clearChat"
];

export type RpcRequest = {
    [M in RpcMethod]: { readonly id: number; readonly method: M; readonly params: RpcMethods[M]["params"] };
}[RpcMethod];

export type RpcTurnEvent =
    | { readonly event: "queued"; readonly requestId: string; readonly position: number }
    | { readonly event: "started"; readonly requestId: string }
    | { readonly event: "text"; readonly requestId: string; readonly text: string };

export type RpcServerMessage =
    | { readonly id: number; readonly result: unknown }
    | { readonly id: number | null; readonly error: EngineErrorPayload }
    | RpcTurnEvent;
