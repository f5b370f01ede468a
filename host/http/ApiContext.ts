import crypto from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type {
    ChatMessage,
    EmbeddingResult,
    EngineClient,
    RawPrompt,
    SamplingParams,
    ToolDefinition,
    TurnResult
} from "../../contract/engineProtocol.js";
import type { TurnListener } from "../../contract/turnEvents.js";
import type { ModelFacts } from "../../contract/models.js";
import type { TurnRunner } from "../backends/routeTurns.js";
import { watchAnswer } from "./answerDeadline.js";
import type { LocalModels } from "./localModelEntries.js";
import { apiWorkspace } from "./ApiKeys.js";
import { fromEngineError, invalidRequest, OpenAiError } from "./OpenAiError.js";
import { noteRequest } from "./RequestLog.js";

/**
 * What the API's endpoints beside chat completions (/v1/completions, /v1/embeddings, Ollama's
 * /api/) have of the server: its engine and model, its bounded body reader, and its one count of
 * requests in flight, so that every endpoint is admitted against the same limit as chat.
 */
export interface ApiContext {
    readonly engine: EngineClient;
    modelId(): string;
    /** Longest a turn may run before it is cancelled (ms). */
    readonly requestTimeoutMs: number;
    /** Bytes of a streamed answer a client may leave unread before its turn is stopped (StreamWriter). */
    readonly maxUnreadBytes: number;
    readBody(request: IncomingMessage, response: ServerResponse): Promise<unknown>;
    /** The loaded model's file facts (host/models/inspectModelFile.ts), for Ollama's details; absent in a server given none. */
    readonly modelFacts?: (modelPath: string) => Promise<ModelFacts>;
    /** The models beside the server's own, loaded or found on disk (host/supervisor/EnginePool.ts), for Ollama's /api/ps and /api/tags. */
    readonly localModels?: LocalModels;
    /** Kvault's version (package.json), for Ollama's /api/version; absent when the host did not say. */
    readonly kvaultVersion?: string;
    /** Counts an embed call for kvault_requests_total: served (true) or failed. */
    countEmbed?(served: boolean): void;
    /**
     * Takes a place among the requests in flight for the key `keyNamespace` (undefined: the default
     * key), or throws 429 when none is left or the key holds its fair share (InFlightLimit); returns the release.
     */
    admit(keyNamespace: string | undefined): () => void;
}

/** The workspace a request names: the `X-Kvault-Workspace` header, else the body's field (OpenAI's `user`); undefined for none. */
export function namedWorkspace(request: IncomingMessage, fromBody: string | undefined, param: string): string | undefined {
    const header = request.headers["x-kvault-workspace"];
    const named = (typeof header === "string" && header !== "" ? header : undefined) ?? (fromBody === "" ? undefined : fromBody);
    if (named !== undefined && named.length > 256) {
        throw invalidRequest("The workspace name is longer than 256 characters.", param);
    }
    return named;
}

export interface ApiTurn {
    readonly requestId: string;
    /** The API key's namespace (ApiKeys.namespaceOf; undefined: the default key), which a named workspace is in. */
    readonly keyId: string | undefined;
    /** The workspace the request names; without one the turn has a workspace of its own, forgotten when it ends. */
    readonly named: string | undefined;
    readonly messages?: readonly ChatMessage[];
    readonly prompt?: RawPrompt;
    readonly sampling: SamplingParams;
    /** The tools the chat template describes to the model (chat completions). */
    readonly tools?: readonly ToolDefinition[];
    /** Ends the turn early, failing it with the signal's reason: its StreamWriter's `stopped` (a client that does not read). */
    readonly stop?: AbortSignal;
}

/**
 * One turn for an API request, as chat completions run theirs: admitted against the in-flight
 * limit, in the key's namespace, cancelled when the client goes away or the time limit passes
 * (then a 504 OpenAiError) or when `turn.stop` aborts (then its reason), its own workspace forgotten
 * afterwards. Every failure is an OpenAiError.
 * `runner` runs it: the engine, or a backend's model (a TurnRunner over RemoteBackend, which keeps
 * no workspace here, so there is none to forget).
 */
export async function runApiTurn(
    context: ApiContext,
    response: ServerResponse,
    turn: ApiTurn,
    listener?: TurnListener,
    runner: TurnRunner = context.engine
): Promise<TurnResult> {
    const release = context.admit(turn.keyId);
    const lastText = turn.prompt === undefined ? turn.messages?.at(-1)?.content : "text" in turn.prompt ? turn.prompt.text : undefined;
    noteRequest(response, {
        ...(turn.named === undefined ? {} : { workspace: turn.named }),
        ...(lastText === undefined ? {} : { prompt: lastText })
    });
    const workspace = turn.named !== undefined ? apiWorkspace(turn.keyId, turn.named) : `api-request:${crypto.randomUUID()}`;
    const deadline = watchAnswer(response, context.requestTimeoutMs);
    try {
        const result = await runner.chat(
            {
                requestId: turn.requestId,
                workspace,
                messages: turn.messages ?? [],
                ...(turn.prompt === undefined ? {} : { prompt: turn.prompt }),
                ...(turn.tools === undefined ? {} : { tools: turn.tools }),
                // a named workspace may keep its KV on disk for the next start: `X-Kvault-Keep-Kv: on`
                ...(turn.named !== undefined && response.req?.headers["x-kvault-keep-kv"] === "on" ? { keepKvOnDisk: true } : {}),
                sampling: turn.sampling
            },
            listener,
            turn.stop === undefined ? deadline.signal : AbortSignal.any([deadline.signal, turn.stop])
        );
        // a turn that ended as it was stopped has lost text on the way: it is no whole answer
        if (turn.stop?.aborted === true) {
            throw turn.stop.reason;
        }
        noteRequest(response, { promptTokens: result.usage.promptTokens, completionTokens: result.usage.completionTokens });
        return result;
    } catch (error) {
        if (turn.stop?.aborted === true) {
            throw turn.stop.reason;
        }
        if (deadline.timedOut) {
            throw deadline.timeoutError();
        }
        throw error instanceof OpenAiError ? error : fromEngineError(error);
    } finally {
        deadline.dispose();
        release();
        if (turn.named === undefined && runner === context.engine) {
            await context.engine.call("forgetWorkspace", { workspace }).catch(() => undefined);
        }
    }
}

/** An embed call admitted as a turn is (for the key `keyId`, a namespace); its failures as OpenAiErrors. */
export async function runApiEmbed(
    context: ApiContext,
    keyId: string | undefined,
    inputs: readonly (string | readonly number[])[],
    response?: ServerResponse
): Promise<EmbeddingResult> {
    const release = context.admit(keyId);
    try {
        const result = await context.engine.call("embed", { inputs });
        if (response !== undefined) {
            noteRequest(response, { promptTokens: result.numTokens.reduce((sum, count) => sum + count, 0) });
        }
        context.countEmbed?.(true);
        return result;
    } catch (error) {
        context.countEmbed?.(false);
        throw error instanceof OpenAiError ? error : fromEngineError(error);
    } finally {
        release();
    }
}

/** The 404 for a model this server does not run, naming the one it does. */
export function unknownModel(context: ApiContext, model: string, param = "model"): OpenAiError {
    return new OpenAiError(
        404,
        `The model "${model.slice(0, 200)}" does not exist here. This server runs "${context.modelId()}" (GET /v1/models).`,
        "not_found_error",
        "model_not_found",
        param
    );
}
