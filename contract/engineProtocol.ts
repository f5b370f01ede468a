// The one message protocol between a host (Electron main or the headless server) and the engine
// process (docs/ARCHITECTURE.md, Processes). Plain JSON-safe data only: it crosses process.send and
// Electron's MessagePort unchanged. Besides a turn's own commands and events, every engine-served
// method of the RPC (contract/rpc/rpcSpec.ts) crosses as one generic `call` and its `answer`.

import type { EngineCompute } from "./engineCompute.js";
import type { McpToolCallOutcome } from "./mcp.js";
import type { TurnEvent, TurnListener } from "./turnEvents.js";
import type { KvCacheType } from "./models.js";
import type { EngineMethod, RpcParams, RpcResult } from "./rpc/rpcSpec.js";

export type ChatRole = "system" | "user" | "assistant";

export interface ChatMessage {
    readonly role: ChatRole;
    readonly content: string;
    /** An assistant message's calls of the turn's tools, each with the tool's result once the client sent it. */
    readonly toolCalls?: readonly ToolCall[];
}

/** One call of a tool the model made (OpenAI's `tool_calls` entry), with the result the client sent back (its `tool` message). */
export interface ToolCall {
    readonly id: string;
    readonly name: string;
    /** The arguments as JSON text, as the model wrote them. */
    readonly arguments: string;
    /** The tool's answer, as the client sent it; absent while the call waits for one. */
    readonly result?: string;
}

/** A tool the model may call (OpenAI's `tools[].function`): rendered into the prompt by the model's chat template. */
export interface ToolDefinition {
    readonly name: string;
    readonly description?: string;
    /** The arguments' JSON schema (the parts a grammar enforces, readGrammarSchema). */
    readonly parameters?: JsonObject;
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
    /** Drop tokens less likely than `minP` times the most likely one's probability, 0..1 (0 is off). */
    readonly minP?: number;
    /** llama.cpp's repeat penalty: divides the logits of recently seen tokens, 0..2 (1 is off). */
    readonly repeatPenalty?: number;
    /** Subtracted once from the logit of every token seen in the last `repeatLastTokens`, -2..2 (0 is off). */
    readonly presencePenalty?: number;
    /** Subtracted from a token's logit once per time it was seen in the last `repeatLastTokens`, -2..2 (0 is off). */
    readonly frequencyPenalty?: number;
    /** How many of the latest tokens (prompt and answer) the three penalties look back over, 0..4096; 64 when not given. */
    readonly repeatLastTokens?: number;
    /**
     * XTC (exclude top choices): with `probability` 0..1 at each step, every token at least
     * `threshold` 0..1 likely is removed but the least likely of them; absent is off.
     */
    readonly xtc?: { readonly probability: number; readonly threshold: number };
    /** Added to a token's logit before sampling, -100..100 per token (-100 in effect bans it); at most 1,024 entries. */
    readonly tokenBias?: readonly TokenBias[];
    /** Constrains the answer to a grammar, built in the engine from this data. */
    readonly grammar?: GrammarSpec;
}

/** A bias for one token id of the model's vocabulary (OpenAI's `logit_bias` entry). */
export interface TokenBias {
    readonly token: number;
    readonly bias: number;
}

/**
 * A JSON object (a schema is one): plain objects, lists, strings, finite numbers, booleans and
 * null, as JSON.parse makes them; contract/rpc/turnSchemas.ts jsonObjectProblem checks it. Typed
 * loosely on purpose: a recursive JSON type makes the RPC's inferred types too deep to check.
 */
export type JsonObject = { readonly [key: string]: unknown };

/**
 * Any JSON text (`json`), or JSON of a schema (`jsonSchema`, the parts node-llama-cpp's grammar
 * supports), or tool calls in the template's own syntax (`toolCalls`): one to `maxCalls` of
 * `calls`, each its name and arguments of its schema (engine/runtime/toolCallGrammar.ts).
 */
export type GrammarSpec =
    | { readonly kind: "json" }
    | { readonly kind: "jsonSchema"; readonly schema: JsonObject }
    | {
          readonly kind: "toolCalls";
          readonly syntax: ToolCallSyntax;
          readonly calls: readonly { readonly name: string; readonly schema: JsonObject }[];
          readonly maxCalls: number;
      };

/** A token of the answer with its natural-log probability (OpenAI's `logprobs.content` entry). */
export interface TokenLogprob {
    readonly token: string;
    readonly logprob: number;
    /** The token's bytes: its text may be part of a multi-byte character. */
    readonly bytes: readonly number[];
    readonly topLogprobs: readonly { readonly token: string; readonly logprob: number; readonly bytes: readonly number[] }[];
}

/**
 * A prompt the model continues as it stands, without the chat template (`/v1/completions`, Ollama's
 * raw generate): text, tokenized with the model's BOS in front, or the model's own token ids.
 */
export type RawPrompt = { readonly text: string } | { readonly tokens: readonly number[] };

/** One chat turn: the whole conversation so far, ending with the user's message. */
export interface ChatTurnRequest {
    readonly requestId: string;
    /** The isolation boundary: KV and prefix reuse never cross workspaces. */
    readonly workspace: string;
    /** The conversation; empty when `prompt` is given instead. */
    readonly messages: readonly ChatMessage[];
    /** A raw prompt in place of `messages`: the same admission, workspace and pages, no chat template. */
    readonly prompt?: RawPrompt;
    readonly sampling: SamplingParams;
    /** Tools the chat template tells the model about; with them the last message may be an assistant's calls, all answered. */
    readonly tools?: readonly ToolDefinition[];
    /**
     * The workspace keeps its KV on disk, encrypted (WorkspaceSettings.keepKvOnDisk): its first turn
     * after a restart loads it instead of prefilling. Absent or false: no KV of it touches a disk.
     */
    readonly keepKvOnDisk?: boolean;
}

/** Embeddings of each input in order (rpcSpec `embed`), from the loaded model's embedding context. */
export interface EmbeddingResult {
    /** The model's embedding width: every vector has this many numbers. */
    readonly dimensions: number;
    readonly embeddings: readonly (readonly number[])[];
    /** Tokens each input took, BOS included. */
    readonly numTokens: readonly number[];
}

/** Text's token ids (rpcSpec `tokenize`), each with its piece when asked for: its text, or its bytes when they are not whole UTF-8 alone. */
export interface TokenizeResult {
    readonly tokens: readonly number[] | readonly { readonly id: number; readonly piece: string | readonly number[] }[];
}

export type FinishReason = "stop" | "length";

/** A turn served in full. */
export interface TurnResult {
    readonly text: string;
    readonly finishReason: FinishReason;
    readonly usage: TurnUsage;
    /** One entry per answer token, when asked for. */
    readonly logprobs?: readonly TokenLogprob[];
    /** A chat's turn with MCP tools: the calls it made before this answer, in order, each with its result or error. */
    readonly toolCalls?: readonly McpToolCallOutcome[];
}

export interface TurnUsage {
    readonly promptTokens: number;
    /** Prompt tokens the engine already held for this workspace and did not evaluate again. */
    readonly cachedPromptTokens: number;
    /** Prompt tokens evaluated for this turn (in the decode context or through the prefill handoff). */
    readonly evaluatedPromptTokens: number;
    readonly completionTokens: number;
    /**
     * With speculative decoding on: tokens drafted for this turn that the model's own choice
     * confirmed (each saved a decode step), and those it did not. Absent when the engine does not speculate.
     */
    readonly acceptedDraftTokens?: number;
    readonly rejectedDraftTokens?: number;
    /** A turn of a workspace that keeps its KV on disk, started with none in memory: tokens loaded from its file instead of prefilled. */
    readonly restoredFromDiskTokens?: number;
    /** Why its file was refused (another model or setting, a torn or altered file): deleted, and the history prefilled again. */
    readonly diskKvRefused?: string;
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
    /** The backend line (contract/engineCompute.ts describeCompute), e.g. "cpu, local build, 2 threads". */
    readonly backend: string;
    /** What that line says, field by field. */
    readonly compute: EngineCompute;
    readonly mode: { readonly requested: "split" | "unified"; readonly effective: "split" | "unified"; readonly reason?: string };
    readonly window: { readonly configured: number; readonly limit: number; readonly boundBy: string; readonly clamped: boolean };
    readonly capacities: { readonly window: number; readonly prefill: number; readonly decode: number; readonly pool: number };
    readonly numDecodeSequences: number;
    readonly pageTokens: number;
    readonly numPages: number;
    readonly pageBytes: number;
    /** The width of the model's embedding vectors (rpcSpec `embed`). */
    readonly embeddingDimensions: number;
    /** The type the K and V caches are kept in; pages follow its row size. */
    readonly kvCacheType: KvCacheType;
    /** How the model's chat template writes a tool call (engine/runtime/toolCallSyntax.ts); absent when it has no syntax of its own. */
    readonly toolCallSyntax?: ToolCallSyntax;
}

/**
 * The chat template's own syntax for a tool call, as it shows in an answer's text (special tokens
 * are dropped there, as the answer's text drops them): prefix, the name, paramsPrefix, the
 * arguments as JSON, suffix. `{{functionName}}` in paramsPrefix or suffix stands for the name.
 */
export interface ToolCallSyntax {
    /** The prefix the template renders first, then the others its wrapper also reads as one. */
    readonly prefixes: readonly string[];
    readonly paramsPrefix: string;
    readonly suffix: string;
    /** Present when the template writes several calls in one answer: around and between them. */
    readonly parallel?: { readonly sectionPrefixes: readonly string[]; readonly betweenCalls: string; readonly sectionSuffix: string };
}

/** What a host needs of the engine, whether it runs in its own process behind the supervisor or, in tests of a host alone, in process. */
export interface EngineClient {
    readonly info: EngineInfo;
    /** One turn; `listener` hears its events, each under the turn's requestId; aborting `signal` cancels it in the engine. */
    chat(request: ChatTurnRequest, listener?: TurnListener, signal?: AbortSignal): Promise<TurnResult>;
    /** One of the engine's calls (contract/rpc/rpcSpec.ts, `serve: "engine"`), with params the spec's schema passed. */
    call<M extends EngineMethod>(method: M, params: RpcParams<M>): Promise<RpcResult<M>>;
}

/** host → engine */
export type EngineCommand =
    | { readonly type: "chat"; readonly request: ChatTurnRequest }
    | { readonly type: "cancel"; readonly requestId: string }
    /** An engine-served method of the RPC spec, answered with `answer` under the same callId. */
    | EngineCallCommand
    | { readonly type: "shutdown" };

export type EngineCallCommand = {
    [M in EngineMethod]: { readonly type: "call"; readonly callId: string; readonly method: M; readonly params: RpcParams<M> };
}[EngineMethod];

/** engine → host */
export type EngineEvent =
    | { readonly type: "ready"; readonly info: EngineInfo }
    | { readonly type: "startFailed"; readonly error: EngineErrorPayload }
    /** A turn's events (queued, started, text), as the host forwards them to the page (contract/turnEvents.ts). */
    | TurnEvent
    | {
          readonly type: "finished";
          readonly requestId: string;
          readonly text: string;
          readonly finishReason: FinishReason;
          readonly usage: TurnUsage;
          readonly logprobs?: readonly TokenLogprob[];
      }
    | { readonly type: "failed"; readonly requestId: string; readonly error: EngineErrorPayload }
    /** A call's answer: its result, or why it failed (a refused call is answered so too). */
    | { readonly type: "answer"; readonly callId: string; readonly result?: unknown; readonly error?: EngineErrorPayload }
    /**
     * The events of one turn of the engine's event loop, in order, as one message (every
     * sequence's token of one decode step, say): one write on the channel and one wake of the
     * host instead of one per event. Never nested.
     */
    | { readonly type: "batch"; readonly events: readonly EngineEvent[] };

/**
 * The events one message from the engine process carries, in order: a `batch`'s events (a batch
 * nested in one is dropped: the engine never sends one), else the message itself. Unchecked
 * `unknown`s, as every message from another process is.
 */
export function eventsOfEngineMessage(message: unknown): unknown[] {
    const batch = message as { type?: unknown; events?: unknown } | null;
    if (typeof batch !== "object" || batch === null || batch.type !== "batch" || !Array.isArray(batch.events)) {
        return [message];
    }
    return (batch.events as unknown[]).filter((event) => (event as { type?: unknown } | null)?.type !== "batch");
}
