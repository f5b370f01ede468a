import type {
    ChatMessage,
    ChatTurnRequest,
    DraftMeasurement,
    EngineInfo,
    TurnCallbacks,
    TurnResult
} from "../../contract/engineProtocol.js";

export type { TurnCallbacks, TurnResult } from "../../contract/engineProtocol.js";
import type { EngineSnapshot } from "../../contract/EngineSnapshot.js";
import type { AuditSummary, CanaryReport, DrillDescription, DrillReport, ReplayableTurn, ReplaySummary } from "../../contract/isolation.js";
import type { ModelDownload, ModelFacts, ModelLibraryListing } from "../../contract/models.js";

/**
 * What a host (the headless server, Electron main) needs from the engine, whether it runs in its
 * own process behind the supervisor or, in tests of the host alone, in process.
 */
export interface EngineClient {
    info(): EngineInfo;
    chat(request: ChatTurnRequest, callbacks?: TurnCallbacks, signal?: AbortSignal): Promise<TurnResult>;
    measure(workspace: string, messages: readonly ChatMessage[], draft: string): Promise<DraftMeasurement> | DraftMeasurement;
    snapshot(): Promise<EngineSnapshot> | EngineSnapshot;
    forgetWorkspace(workspace: string): Promise<void>;
    /** I1–I7 over the whole engine (docs/ARCHITECTURE.md, Isolation you can check). */
    audit(): Promise<AuditSummary> | AuditSummary;
    /** Finished greedy turns `replay` can check, by the requestId the host sent. */
    replayableTurns(): Promise<readonly ReplayableTurn[]> | readonly ReplayableTurn[];
    /** Differential replay of a finished turn; rejects with replay_unavailable for one the engine does not keep. */
    replay(requestId: string): Promise<ReplaySummary>;
    listDrills(): Promise<readonly DrillDescription[]> | readonly DrillDescription[];
    /** Runs a fault drill in sandboxed engines; rejects with unknown_drill for an id not listed. */
    runDrill(id: string): Promise<DrillReport>;
    /** The canary probe on the loaded model, in two temporary workspaces; rejects with canary_running while one runs. */
    runCanary(params: { readonly fillerTokens?: number }): Promise<CanaryReport>;
    /** A GGUF file's facts and memory estimate, without loading it; rejects with model_unreadable, model_not_gguf or model_unsupported. */
    inspectModel(path: string): Promise<ModelFacts>;
    /**
     * Loads another model: a path on the host's machine, or "tiny" for the built-in demo model.
     * A bad file is refused before the running engine is touched; otherwise running turns end with
     * model_switched. Resolves with the new engine's info.
     */
    switchModel(model: string): Promise<EngineInfo>;
    /**
     * Starts downloading a model (an http(s) URL or an `hf:` reference) into the host's models
     * directory; resolves at once with its record. Rejects with download_source_invalid for any other source.
     */
    startDownload(source: string): Promise<ModelDownload>;
    /** Every download since the host started, and the partial ones an earlier start left, oldest first. */
    listDownloads(): Promise<readonly ModelDownload[]>;
    /** Cancels a running download, or discards a resumable one, deleting its partial file; rejects with download_unknown for an id not listed. */
    cancelDownload(id: string): Promise<ModelDownload>;
    /**
     * Continues a failed download from its partial file (or from zero when the file on the server
     * changed, saying so in `notice`); rejects with download_unknown or download_not_resumable.
     */
    resumeDownload(id: string): Promise<ModelDownload>;
    /** The host's model library: models opened by path or downloaded, with their facts. */
    listModels(): Promise<ModelLibraryListing>;
    /** Removes a library entry, and with `deleteFile` a downloaded model's file; rejects with library_model_unknown, library_file_not_owned or library_model_in_use. */
    forgetModel(id: string, deleteFile: boolean): Promise<ModelLibraryListing>;
}
