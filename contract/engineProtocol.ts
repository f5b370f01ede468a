// The one message protocol between a host (Electron main or the headless server) and the engine
// process (docs/ARCHITECTURE.md, Processes). Plain JSON-safe data only: it crosses process.send and
// Electron's MessagePort unchanged. The renderer's RPC reuses these payload types.

import type { AuditSummary, CanaryReport, DrillDescription, DrillReport, ReplayableTurn, ReplaySummary } from "./isolation.js";

export type ChatRole = "system" | "user" | "assistant";

export interface ChatMessage {
    readonly role: ChatRole;
    readonly content: string;
}

export interface SamplingParams {
    /** 0 is greedy. */
    readonly temperature: number;
    readonly topP?: number;
    readonly topK?: number;
    readonly seed?: number;
    /** Tokens to generate at most. */
    readonly maxTokens: number;
    /** Generation ends before any of these strings; they are not part of the answer. */
    readonly stop?: readonly string[];
    /** Report each answer token's log probability and, when above 0, that many most likely alternatives (at most 20). */
    readonly logprobs?: { readonly top: number };
}

/** A token of the answer with its natural-log probability (OpenAI's `logprobs.content` entry). */
export interface TokenLogprob {
    readonly token: string;
    readonly logprob: number;
    /** The token's bytes: its text may be part of a multi-byte character. */
    readonly bytes: readonly number[];
    readonly topLogprobs: readonly { readonly token: string; readonly logprob: number; readonly bytes: readonly number[] }[];
}

/** One chat turn: the whole conversation so far, ending with the user's message. */
export interface ChatTurnRequest {
    readonly requestId: string;
    /** The isolation boundary: KV and prefix reuse never cross workspaces. */
    readonly workspace: string;
    readonly messages: readonly ChatMessage[];
    readonly sampling: SamplingParams;
}

export type FinishReason = "stop" | "length";

/** What a turn's caller hears while it runs. */
export interface TurnCallbacks {
    onQueued?(position: number): void;
    onStarted?(): void;
    /** Text as it can be shown; with logprobs asked for, the entries of the tokens that made it. */
    onText?(text: string, logprobs?: readonly TokenLogprob[]): void;
}

/** A turn served in full. */
export interface TurnResult {
    readonly text: string;
    readonly finishReason: FinishReason;
    readonly usage: TurnUsage;
    /** One entry per answer token, when asked for. */
    readonly logprobs?: readonly TokenLogprob[];
}

export interface TurnUsage {
    readonly promptTokens: number;
    /** Prompt tokens the engine already held for this workspace and did not evaluate again. */
    readonly cachedPromptTokens: number;
    /** Prompt tokens evaluated for this turn (in the decode context or through the prefill handoff). */
    readonly evaluatedPromptTokens: number;
    readonly completionTokens: number;
}

/** A failure the caller sees: a stable code and a message with the numbers and what to do. */
export interface EngineErrorPayload {
    readonly code: string;
    readonly message: string;
}

export interface DraftMeasurement {
    readonly workspace: string;
    /** Tokens the draft adds to the conversation (the rendered user turn). */
    readonly draftTokens: number;
    /** Tokens the conversation already uses. */
    readonly usedTokens: number;
    /** The workspace's limit: the advertised window (min of configured window and measured capacities). */
    readonly limit: number;
    /** `limit − usedTokens − draftTokens`; negative when the draft does not fit. */
    readonly remainingTokens: number;
    readonly fits: boolean;
}

export interface EngineInfo {
    readonly modelPath: string;
    readonly modelName: string;
    readonly backend: string;
    readonly mode: { readonly requested: "split" | "unified"; readonly effective: "split" | "unified"; readonly reason?: string };
    readonly window: { readonly configured: number; readonly limit: number; readonly boundBy: string; readonly clamped: boolean };
    readonly capacities: { readonly window: number; readonly prefill: number; readonly decode: number; readonly pool: number };
    readonly numDecodeSequences: number;
    readonly pageTokens: number;
    readonly numPages: number;
    readonly pageBytes: number;
}

/** host → engine */
export type EngineCommand =
    | { readonly type: "chat"; readonly request: ChatTurnRequest }
    | { readonly type: "cancel"; readonly requestId: string }
    | {
          readonly type: "measure";
          readonly callId: string;
          readonly workspace: string;
          readonly messages: readonly ChatMessage[];
          readonly draft: string;
      }
    | { readonly type: "snapshot"; readonly callId: string }
    /** Drops the workspace's KV and transcript; answered with `forgotten` once they are gone. */
    | { readonly type: "forgetWorkspace"; readonly callId: string; readonly workspace: string }
    /** I1–I7 over the whole engine; answered with `audited`. */
    | { readonly type: "audit"; readonly callId: string }
    /** The finished greedy turns `replay` can check; answered with `replayableTurns`. */
    | { readonly type: "replayableTurns"; readonly callId: string }
    /** Differential replay of the turn the host sent as `requestId`; answered with `replayed` (replay_unavailable when it is not kept). */
    | { readonly type: "replay"; readonly callId: string; readonly requestId: string }
    /** The fault drills; answered with `drills`. */
    | { readonly type: "listDrills"; readonly callId: string }
    /** Runs one fault drill in sandboxed engines of its own (seconds); answered with `drillReport` (unknown_drill for an id not listed). */
    | { readonly type: "runDrill"; readonly callId: string; readonly drillId: string }
    /** Runs the canary probe on the loaded model (tens of seconds); answered with `canaryReport` (canary_running while one runs). */
    | { readonly type: "runCanary"; readonly callId: string; readonly fillerTokens?: number }
    | { readonly type: "shutdown" };

/** engine → host */
export type EngineEvent =
    | { readonly type: "ready"; readonly info: EngineInfo }
    | { readonly type: "startFailed"; readonly error: EngineErrorPayload }
    | { readonly type: "queued"; readonly requestId: string; readonly position: number }
    | { readonly type: "started"; readonly requestId: string }
    | { readonly type: "token"; readonly requestId: string; readonly text: string; readonly logprobs?: readonly TokenLogprob[] }
    | {
          readonly type: "finished";
          readonly requestId: string;
          readonly text: string;
          readonly finishReason: FinishReason;
          readonly usage: TurnUsage;
          readonly logprobs?: readonly TokenLogprob[];
      }
    | { readonly type: "failed"; readonly requestId: string; readonly error: EngineErrorPayload }
    | { readonly type: "measured"; readonly callId: string; readonly result?: DraftMeasurement; readonly error?: EngineErrorPayload }
    | { readonly type: "snapshot"; readonly callId: string; readonly snapshot?: unknown; readonly error?: EngineErrorPayload }
    | { readonly type: "forgotten"; readonly callId: string; readonly error?: EngineErrorPayload }
    | { readonly type: "audited"; readonly callId: string; readonly result?: AuditSummary; readonly error?: EngineErrorPayload }
    | {
          readonly type: "replayableTurns";
          readonly callId: string;
          readonly result?: readonly ReplayableTurn[];
          readonly error?: EngineErrorPayload;
      }
    | { readonly type: "replayed"; readonly callId: string; readonly result?: ReplaySummary; readonly error?: EngineErrorPayload }
    | {
          readonly type: "drills";
          readonly callId: string;
          readonly result?: readonly DrillDescription[];
          readonly error?: EngineErrorPayload;
      }
    | { readonly type: "drillReport"; readonly callId: string; readonly result?: DrillReport; readonly error?: EngineErrorPayload }
    | { readonly type: "canaryReport"; readonly callId: string; readonly result?: CanaryReport; readonly error?: EngineErrorPayload };

/** Each call command's answer event type (EngineConnection waits for it; a refused call is answered with it too). */
export const callAnswerTypes = {
    measure: "measured",
    snapshot: "snapshot",
    forgetWorkspace: "forgotten",
    audit: "audited",
    replayableTurns: "replayableTurns",
    replay: "replayed",
    listDrills: "drills",
    runDrill: "drillReport",
    runCanary: "canaryReport"
} as const satisfies {
    readonly [C in Extract<EngineCommand, { callId: string }>["type"]]: Extract<EngineEvent, { callId: string }>["type"];
};

export type CallCommandType = keyof typeof callAnswerTypes;
