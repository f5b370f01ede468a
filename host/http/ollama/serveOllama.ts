import crypto from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TurnResult } from "../../../contract/engineProtocol.js";
import type { TurnRunner } from "../../backends/routeTurns.js";
import { namedWorkspace, runApiEmbed, runApiTurn, type ApiContext } from "../ApiContext.js";
import { upstreamUser, type BackendRoute, type Gateway } from "../gateway/serveGateway.js";
import { sendJson } from "../httpResponses.js";
import { fromEngineError, invalidRequest, OpenAiError } from "../OpenAiError.js";
import { StreamWriter } from "../StreamWriter.js";
import { ollamaDiskEntries, ollamaLoadedEntries } from "../localModelEntries.js";
import {
    backendRouteOf,
    backendShowBody,
    backendTagEntries,
    backendTurnRunner,
    checkBackendNumCtx,
    embedOnBackend
} from "./ollamaBackends.js";
import { isServedName, OLLAMA_API_VERSION, ollamaModelEntry, ollamaShowBody } from "./ollamaModel.js";
import { parseOllamaChat, parseOllamaEmbed, parseOllamaGenerate, parseOllamaShow, type OllamaTurnRequest } from "./parseOllamaRequests.js";

/**
 * Ollama's API on Kvault's port, for the clients that speak it: `/api/version`, `/api/tags`,
 * `/api/ps`, `/api/show`, `/api/chat`, `/api/generate`, `/api/embed` and the legacy
 * `/api/embeddings`, behind the same keys as `/v1/`. Turns run as the OpenAI API's do (the same
 * admission, the `X-Kvault-Workspace` header's workspace in the key's namespace, or one of their
 * own); answers stream as NDJSON unless `stream: false`. Errors are Ollama's `{"error": "…"}` with
 * the status, so its client shows the message; one mid-stream is a last line of that shape. A
 * backend's model (`NAME/<id>`, through `gateway`) is listed and served beside the local one
 * (ollamaBackends.ts).
 */
export async function serveOllama(
    context: ApiContext,
    request: IncomingMessage,
    response: ServerResponse,
    route: string,
    /** Checks the request's key (a 401 otherwise) and says whose it is; called inside, so a refusal is in Ollama's shape too. */
    identify: () => { readonly keyId: string | undefined },
    /** The remote backends' models; none when absent. */
    gateway?: Gateway
): Promise<void> {
    try {
        const { keyId } = identify();
        switch (route) {
            case "GET /api/version":
                // Ollama's shape: `version` is the Ollama API version whose shapes Kvault follows (clients gate features on it);
                // Kvault's own version is beside it
                return sendJson(response, 200, {
                    version: OLLAMA_API_VERSION,
                    ...(context.kvaultVersion === undefined ? {} : { kvault_version: context.kvaultVersion })
                });
            case "GET /api/tags":
                return sendJson(response, 200, {
                    models: [
                        await ollamaModelEntry(context.modelId(), context.engine.info, context.modelFacts),
                        ...(context.localModels === undefined ? [] : await ollamaLoadedEntries(context.localModels, context.modelFacts)),
                        ...(context.localModels === undefined ? [] : await ollamaDiskEntries(context.localModels)),
                        ...(await backendTagEntries(gateway))
                    ]
                });
            case "GET /api/ps": {
                const entry = await ollamaModelEntry(context.modelId(), context.engine.info, context.modelFacts);
                // the server's own model is loaded until the server stops or the model is switched: keep_alive does not unload it;
                // the others the API's `model` loaded are unloaded after their idle time (EnginePool)
                // Ollama's size_vram: the share of the model on the device, by the layers node-llama-cpp placed there
                const { layers } = context.engine.info.compute;
                const sizeVram = layers.numTotal === 0 ? 0 : Math.round((Number(entry.size) * layers.numOnDevice) / layers.numTotal);
                // a backend's model is as loaded as its server keeps it; Kvault does not know its memory
                const remote = (await backendTagEntries(gateway)).map((entry) => ({
                    ...entry,
                    expires_at: "9999-12-31T23:59:59Z",
                    size_vram: 0
                }));
                return sendJson(response, 200, {
                    models: [
                        { ...entry, expires_at: "9999-12-31T23:59:59Z", size_vram: sizeVram },
                        ...(context.localModels === undefined ? [] : await ollamaLoadedEntries(context.localModels, context.modelFacts)),
                        ...remote
                    ]
                });
            }
            case "POST /api/show": {
                const name = parseOllamaShow(await context.readBody(request, response));
                const remote = gateway?.route(name);
                if (remote !== undefined) {
                    return sendJson(response, 200, await backendShowBody(remote));
                }
                checkModel(context, name);
                return sendJson(response, 200, await ollamaShowBody(context.modelId(), context.engine.info, context.modelFacts));
            }
            case "POST /api/chat": {
                const received = await context.readBody(request, response);
                const target = await readTarget(context, gateway, received);
                const body = parseOllamaChat(received, target.windowTokens);
                return await runTurn(context, request, response, keyId, body, "chat", servedModel(context, target, body, request, keyId));
            }
            case "POST /api/generate": {
                const received = await context.readBody(request, response);
                const target = await readTarget(context, gateway, received);
                const body = parseOllamaGenerate(received, target.windowTokens);
                const served = servedModel(context, target, body, request, keyId);
                if (body.loadOnly) {
                    return sendJson(response, 200, { ...stamp(served.name), response: "", done: true, done_reason: "load" });
                }
                return await runTurn(context, request, response, keyId, body, "generate", served);
            }
            case "POST /api/embed":
            case "POST /api/embeddings": {
                const legacy = route === "POST /api/embeddings";
                const startedAt = process.hrtime.bigint();
                const received = await context.readBody(request, response);
                const { remote, windowTokens } = await readTarget(context, gateway, received);
                const body = parseOllamaEmbed(received, windowTokens, legacy);
                const embedded =
                    remote === undefined
                        ? await embedLocally(context, body, response, keyId)
                        : await embedOnBackend(context, remote, body.inputs, body.dimensions, response, keyId);
                if (legacy) {
                    return sendJson(response, 200, { embedding: embedded.embeddings[0] });
                }
                return sendJson(response, 200, {
                    model: remote === undefined ? context.modelId() : body.model,
                    embeddings: embedded.embeddings,
                    total_duration: Number(process.hrtime.bigint() - startedAt),
                    load_duration: 0,
                    prompt_eval_count: embedded.promptTokens
                });
            }
            default:
                throw new OpenAiError(404, `Unknown endpoint ${route}.`, "not_found_error", "unknown_url");
        }
    } catch (error) {
        const failure = error instanceof OpenAiError ? error : fromEngineError(error);
        if (!response.headersSent) {
            if (failure.retryAfterSeconds !== undefined) {
                response.setHeader("Retry-After", String(failure.retryAfterSeconds));
            }
            sendJson(response, failure.status === 499 ? 400 : failure.status, { error: failure.message });
        } else if (!response.destroyed) {
            response.end(`${JSON.stringify({ error: failure.message })}\n`);
        }
    }
}

function checkModel(context: ApiContext, model: string): void {
    if (!isServedName(model, context.modelId())) {
        throw new OpenAiError(
            404,
            `model "${model.slice(0, 200)}" not found: this server runs "${context.modelId()}" (GET /api/tags).`,
            "not_found_error",
            "model_not_found",
            "model"
        );
    }
}

/** The local model's vectors, once the name is its model's and `dimensions` (if given) its width. */
async function embedLocally(
    context: ApiContext,
    body: ReturnType<typeof parseOllamaEmbed>,
    response: ServerResponse,
    keyId: string | undefined
): Promise<{ readonly embeddings: readonly (readonly number[])[]; readonly promptTokens: number }> {
    checkModel(context, body.model);
    const dimensions = context.engine.info.embeddingDimensions;
    if (body.dimensions !== undefined && body.dimensions !== dimensions) {
        throw invalidRequest(
            `dimensions is ${body.dimensions}; this model's embeddings have ${dimensions} and Kvault does not shorten them. Send ${dimensions} or leave it out.`,
            "dimensions"
        );
    }
    const result = await runApiEmbed(context, keyId, body.inputs, response);
    return { embeddings: result.embeddings, promptTokens: result.numTokens.reduce((sum, count) => sum + count, 0) };
}

function stamp(model: string): { model: string; created_at: string } {
    return { model, created_at: new Date().toISOString() };
}

/** What serves a turn and the name its answer gives: the local engine, once the name is checked to be its model's. */
interface ServedModel {
    readonly name: string;
    readonly runner: TurnRunner;
}

/** Where a request's model runs: a backend's (`NAME/…`, its route), else the local engine; the window `options` is read against. */
interface Target {
    readonly remote?: BackendRoute;
    readonly windowTokens: number;
}

/**
 * The target of a body: for a backend's model its route, with `options.num_ctx` checked against
 * the window the backend states (checkBackendNumCtx) so the options' parser need not; else the
 * engine's window.
 */
async function readTarget(context: ApiContext, gateway: Gateway | undefined, received: unknown): Promise<Target> {
    const remote = backendRouteOf(gateway, received);
    if (remote === undefined) {
        return { windowTokens: context.engine.info.window.limit };
    }
    await checkBackendNumCtx(remote, received);
    return { remote, windowTokens: Number.MAX_SAFE_INTEGER };
}

/** The backend's turn runner under the name the client asked for, or the local engine once the name is checked to be its model's. */
function servedModel(
    context: ApiContext,
    target: Target,
    body: OllamaTurnRequest,
    request: IncomingMessage,
    keyId: string | undefined
): ServedModel {
    if (target.remote !== undefined) {
        const user = upstreamUser(keyId, namedWorkspace(request, undefined, "X-Kvault-Workspace"));
        return { name: body.model, runner: backendTurnRunner(target.remote, body.sampling, user) };
    }
    checkModel(context, body.model);
    return { name: context.modelId(), runner: context.engine };
}

/** A chat or generate turn, streamed as NDJSON lines (`done: false` with each piece, then the `done: true` line with the counts) or answered whole. */
async function runTurn(
    context: ApiContext,
    request: IncomingMessage,
    response: ServerResponse,
    keyId: string | undefined,
    body: OllamaTurnRequest,
    kind: "chat" | "generate",
    served: ServedModel
): Promise<void> {
    const startedAt = process.hrtime.bigint();
    let firstTokenAt: bigint | undefined;
    const piece = (text: string): Record<string, unknown> =>
        kind === "chat" ? { message: { role: "assistant", content: text } } : { response: text };
    // a backend's stream waits on each line; the engine's turn is stopped past the unread cap (StreamWriter.ts)
    const writer = new StreamWriter(response, context.maxUnreadBytes);
    const line = (fields: Record<string, unknown>): Promise<void> =>
        writer.write(`${JSON.stringify({ ...stamp(served.name), ...fields })}\n`);
    const result: TurnResult = await runApiTurn(
        context,
        response,
        {
            requestId: `ollama-${crypto.randomUUID()}`,
            keyId,
            named: namedWorkspace(request, undefined, "X-Kvault-Workspace"),
            ...(body.messages === undefined ? {} : { messages: body.messages }),
            ...(body.prompt === undefined ? {} : { prompt: body.prompt }),
            sampling: body.sampling,
            stop: writer.stopped
        },
        (event) => {
            if (event.type !== "text") {
                return;
            }
            firstTokenAt ??= process.hrtime.bigint();
            if (!body.stream) {
                return;
            }
            if (!response.headersSent) {
                response.writeHead(200, { "Content-Type": "application/x-ndjson; charset=utf-8", "Cache-Control": "no-store" });
            }
            return line({ ...piece(event.text), done: false });
        },
        served.runner
    );
    const endedAt = process.hrtime.bigint();
    const evalStart = firstTokenAt ?? endedAt;
    const final = {
        ...piece(body.stream ? "" : result.text),
        done: true,
        done_reason: result.finishReason,
        total_duration: Number(endedAt - startedAt),
        load_duration: 0,
        prompt_eval_count: result.usage.promptTokens,
        prompt_eval_duration: Number(evalStart - startedAt),
        eval_count: result.usage.completionTokens,
        eval_duration: Number(endedAt - evalStart)
    };
    if (!body.stream) {
        return sendJson(response, 200, { ...stamp(served.name), ...final });
    }
    if (!response.headersSent) {
        response.writeHead(200, { "Content-Type": "application/x-ndjson; charset=utf-8", "Cache-Control": "no-store" });
    }
    void line(final);
    response.end();
}
