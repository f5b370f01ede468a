// Kvault's API as a gateway to its remote backends: `/v1/models` lists each backend's models as
// `NAME/<model id>`, and `/v1/chat/completions`, `/v1/completions` (streamed or not) and
// `/v1/embeddings` for one of them are forwarded by one forwarder.
// The body goes upstream as the client sent it (the backend refuses what it does not serve), with
// `model` the backend's own id and the workspace (`user`, X-Kvault-Workspace) kept in the key's
// namespace; the answer comes back checked chunk by chunk (backendErrors for every bad byte) and
// with `model` the id the client asked for. A greedy answer is the backend's, unchanged.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BackendView } from "../../../contract/backends.js";
import type { BackendConfig } from "../../backends/BackendConfig.js";
import type { Backends } from "../../backends/Backends.js";
import { answerTooLong, BackendStatusError } from "../../backends/backendErrors.js";
import { readJson } from "../../backends/backendHttp.js";
import {
    type ChunkReading,
    readChunk,
    readCompletion,
    readEmbeddingList,
    readTextChunk,
    readTextCompletion
} from "../../backends/openAiChunks.js";
import { readSseEvents } from "../../backends/readSseEvents.js";
import { watchAnswer } from "../answerDeadline.js";
import { namedWorkspace, type ApiContext } from "../ApiContext.js";
import { sendError, sendJson } from "../httpResponses.js";
import { invalidRequest, OpenAiError } from "../OpenAiError.js";
import { StreamWriter } from "../StreamWriter.js";

/** A backend's model as Kvault's API names it (`NAME/<id>`), split: Backends.route's answer. */
export type BackendRoute = NonNullable<ReturnType<Backends["route"]>>;

/** The OpenAI endpoints forwarded to a backend, by their path under `/v1`. */
export type ForwardedEndpoint = "/chat/completions" | "/completions" | "/embeddings";

/** How one forwarded endpoint's answer is checked: the whole JSON, and (for one that streams) each event. */
interface EndpointShape {
    /** What the answer is called in an error ("chat completion"). */
    readonly what: string;
    /** Throws a backend error (a 502) for an answer Kvault cannot read. */
    readWhole(config: BackendConfig, json: unknown): void;
    /** Each streamed event's reading; absent where the endpoint does not stream (the answer is read whole whatever `stream` says). */
    readonly readChunk?: (config: BackendConfig, data: string) => ChunkReading;
}

const endpointShapes: Readonly<Record<ForwardedEndpoint, EndpointShape>> = {
    "/chat/completions": { what: "chat completion", readWhole: readCompletion, readChunk },
    "/completions": { what: "text completion", readWhole: readTextCompletion, readChunk: readTextChunk },
    "/embeddings": { what: "list of embeddings", readWhole: readEmbeddingList }
};

/** What KvaultHttpServer and Ollama's endpoints ask of the gateway (their one dispatch point for backends' models). */
export interface Gateway {
    /** `/v1/models` entries of every backend's models (a backend that cannot be asked now is left out). */
    modelEntries(): Promise<Record<string, unknown>[]>;
    /** Each backend with its models now (Backends.views): what Ollama's `/api/tags` lists. */
    views(): Promise<BackendView[]>;
    /** The backend and its model id when `model` is a backend's (`NAME/…`); undefined leaves it to the local engine. */
    route(model: string): BackendRoute | undefined;
    /** Serves `endpoint` when `body.model` is a backend's (`NAME/…`) and resolves true; false leaves it to the local engine. */
    forward(
        endpoint: ForwardedEndpoint,
        context: ApiContext,
        body: unknown,
        request: IncomingMessage,
        response: ServerResponse,
        keyId: string | undefined
    ): Promise<boolean>;
}

export function backendGateway(backends: Backends): Gateway {
    return {
        async modelEntries() {
            const views = await backends.views();
            return views.flatMap((view) =>
                view.models.map((model) => ({
                    id: `${view.name}/${model.id}`,
                    object: "model",
                    created: 0,
                    owned_by: `backend:${view.name}`,
                    ...(model.window === undefined ? {} : { max_model_len: model.window.tokens })
                }))
            );
        },
        views: () => backends.views(),
        route: (model) => backends.route(model),
        async forward(endpoint, context, body, request, response, keyId) {
            const model = typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
            const route = typeof model === "string" ? backends.route(model) : undefined;
            if (route === undefined) {
                return false;
            }
            await forwardAnswer(endpoint, context, body as Record<string, unknown>, route, request, response, keyId, model as string);
            return true;
        }
    };
}

async function forwardAnswer(
    endpoint: ForwardedEndpoint,
    context: ApiContext,
    body: Record<string, unknown>,
    route: BackendRoute,
    request: IncomingMessage,
    response: ServerResponse,
    keyId: string | undefined,
    asked: string
): Promise<void> {
    const shape = endpointShapes[endpoint];
    if (shape.readChunk !== undefined && body.stream !== undefined && typeof body.stream !== "boolean") {
        throw invalidRequest("stream must be true or false.", "stream");
    }
    if (body.user !== undefined && body.user !== null && typeof body.user !== "string") {
        // it would go upstream outside the key's namespace: a name is a string, or absent
        throw invalidRequest(
            `user must be a string (the workspace's name), not ${typeof body.user}; send a string or leave it out.`,
            "user"
        );
    }
    const user = upstreamUser(keyId, namedWorkspace(request, body.user ?? undefined, "user"));
    const { user: _given, ...rest } = body;
    const upstream = { ...rest, ...(user === undefined ? {} : { user }) };
    const { backend, model } = route;
    const release = context.admit(keyId);
    const deadline = watchAnswer(response, context.requestTimeoutMs);
    try {
        const answer = await backend.forward(upstream, model, deadline.signal, endpoint);
        const { limits } = backend;
        if (shape.readChunk === undefined || body.stream !== true) {
            const json = await readJson(backend.config, answer, shape.what, limits.idleTimeoutMs, limits.maxBodyBytes);
            shape.readWhole(backend.config, json); // checked: an answer Kvault cannot read is a 502, not passed on
            return sendJson(response, 200, { ...(json as Record<string, unknown>), model: asked });
        }
        const readEvent = shape.readChunk;
        response.writeHead(200, {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-store",
            Connection: "keep-alive"
        });
        const writer = new StreamWriter(response, context.maxUnreadBytes);
        let finished = false;
        let numAnswerChars = 0;
        const events = readSseEvents(backend.config, answer, {
            signal: deadline.signal,
            idleMs: limits.idleTimeoutMs,
            maxEventBytes: limits.maxEventBytes
        });
        for await (const data of events) {
            if (data === "[DONE]") {
                break;
            }
            const reading = readEvent(backend.config, data);
            numAnswerChars += reading.text.length;
            if (numAnswerChars > limits.maxAnswerChars) {
                throw answerTooLong(backend.name, limits.maxAnswerChars, "Ask for fewer tokens (max_tokens).");
            }
            finished = reading.finishReason !== undefined || finished;
            // The next event is read only once the client has taken this one (StreamWriter.ts).
            await writer.write(
                `data: ${JSON.stringify({ ...(JSON.parse(data) as Record<string, unknown>), model: asked })}\n\n`,
                deadline.signal
            );
        }
        if (!finished) {
            throw new OpenAiError(
                502,
                `Backend "${backend.name}" ended its stream without a finish reason: the answer may be cut short.`,
                "server_error",
                "backend_malformed_response"
            );
        }
        response.end("data: [DONE]\n\n");
    } catch (error) {
        const failure = deadline.timedOut ? deadline.timeoutError() : gatewayError(error);
        if (!response.headersSent) {
            sendError(response, failure);
        } else if (!response.destroyed) {
            response.end(`data: ${JSON.stringify(failure.body())}\n\n`); // mid-stream: an error event and no [DONE]
        }
    } finally {
        deadline.dispose();
        release();
    }
}

/**
 * The `user` a named workspace goes upstream as: every gateway client reaches the backend with the
 * one upstream key, so the name stays in its Kvault key's namespace, one to one: a key's names as
 * `ID~GENERATION:name` (a namespace has no ':'), the default key's as they are when they hold no
 * ':', else after one more ':' (so no default name reads as a key's). Undefined for a request that names none.
 */
export function upstreamUser(keyNamespace: string | undefined, named: string | undefined): string | undefined {
    if (named === undefined) {
        return undefined;
    }
    if (keyNamespace !== undefined) {
        return `${keyNamespace}:${named}`;
    }
    return named.includes(":") ? `:${named}` : named;
}

/** A backend failure in OpenAI's shape: the backend's own 4xx passes through (a 400 stays a 400), the rest is a 502 or 504. */
export function gatewayError(error: unknown): OpenAiError {
    if (error instanceof OpenAiError) {
        return error;
    }
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof BackendStatusError && error.status >= 400 && error.status < 500) {
        return new OpenAiError(error.status, message, error.status === 400 ? "invalid_request_error" : "server_error", error.code);
    }
    const code = (error as { code?: unknown }).code;
    switch (code) {
        case "invalid_request":
            return invalidRequest(message);
        case "backend_not_found":
            return new OpenAiError(404, message, "not_found_error", "model_not_found", "model");
        case "backend_timeout":
            return new OpenAiError(504, message, "server_error", code);
        case "backend_unreachable":
        case "backend_http_error":
        case "backend_malformed_response":
        case "backend_response_too_large":
        case "backend_answer_error":
            return new OpenAiError(502, message, "server_error", code);
        default:
            return new OpenAiError(500, message, "server_error", typeof code === "string" ? code : "internal_error");
    }
}
