import type { ChatMessage, ChatTurnRequest, DraftMeasurement, EngineInfo, TurnCallbacks, TurnResult } from "../contract/engineProtocol.js";

export type { TurnCallbacks, TurnResult } from "../contract/engineProtocol.js";
import type { EngineSnapshot } from "../contract/EngineSnapshot.js";

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
}
