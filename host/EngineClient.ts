import type { ChatMessage, ChatTurnRequest, DraftMeasurement, EngineInfo, TurnCallbacks, TurnResult } from "../contract/engineProtocol.js";

export type { TurnCallbacks, TurnResult } from "../contract/engineProtocol.js";
import type { EngineSnapshot } from "../contract/EngineSnapshot.js";
import type { AuditSummary, DrillDescription, DrillReport, ReplayableTurn, ReplaySummary } from "../contract/isolation.js";

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
    /** I1–I7 over the whole engine (ARCHITECTURE.md, Isolation you can check from the app). */
    audit(): Promise<AuditSummary> | AuditSummary;
    /** Finished greedy turns `replay` can check, by the requestId the host sent. */
    replayableTurns(): Promise<readonly ReplayableTurn[]> | readonly ReplayableTurn[];
    /** Differential replay of a finished turn; rejects with replay_unavailable for one the engine does not keep. */
    replay(requestId: string): Promise<ReplaySummary>;
    listDrills(): Promise<readonly DrillDescription[]> | readonly DrillDescription[];
    /** Runs a fault drill in sandboxed engines; rejects with unknown_drill for an id not listed. */
    runDrill(id: string): Promise<DrillReport>;
}
