// Ollama's API over Kvault's remote backends: `/api/tags` and `/api/ps` list each backend's models
// as `NAME/<model id>` beside the local one; `/api/chat` and `/api/generate` for one run through
// the same turn path as the local engine's (runApiTurn), with a TurnRunner over RemoteBackend in
// place of the engine: messages through the backend's `/v1/chat/completions`, a raw prompt
// (`raw: true`) through its `/v1/completions`; `/api/embed` goes to its `/v1/embeddings`, and
// `/api/show` says what the backend states of the model. Every backend failure is gatewayError's.
import crypto from "node:crypto";
import type { ServerResponse } from "node:http";
import type { SamplingParams } from "../../../contract/engineProtocol.js";
import type { RemoteModel } from "../../backends/openAiChunks.js";
import type { TurnRunner } from "../../backends/routeTurns.js";
import { watchAnswer } from "../answerDeadline.js";
import type { ApiContext } from "../ApiContext.js";
import type { EmbeddingInput } from "../embeddings/parseEmbeddings.js";
import { gatewayError, type BackendRoute, type Gateway } from "../gateway/serveGateway.js";
import { invalidRequest, OpenAiError } from "../OpenAiError.js";
import { noteRequest } from "../RequestLog.js";

/** The backend's route when a request body's `model` names a backend's model (`NAME/…`). */
export function backendRouteOf(gateway: Gateway | undefined, body: unknown): BackendRoute | undefined {
    const model = typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
    return typeof model === "string" ? gateway?.route(model) : undefined;
}

/** `/api/tags` entries for every backend's models; a backend that cannot be asked now is left out, as in `/v1/models`. */
export async function backendTagEntries(gateway: Gateway | undefined): Promise<Record<string, unknown>[]> {
    const views = (await gateway?.views()) ?? [];
    return views.flatMap((view) =>
        view.models.map((model) => {
            const name = `${view.name}/${model.id}`;
            return {
                name,
                model: name,
                modified_at: new Date(0).toISOString(),
                // no file here: the backend holds the weights, so there is no size or blob digest to give
                size: 0,
                digest: crypto.createHash("sha256").update(`backend:${name}`).digest("hex"),
                details: { parent_model: "", format: "", family: "", families: [], parameter_size: "", quantization_level: "" }
            };
        })
    );
}

/** `/api/show` for a backend's model: its id and backend, the window the backend states (when it does), nothing it does not say. */
export async function backendShowBody(route: BackendRoute): Promise<Record<string, unknown>> {
    const model = await findModel(route);
    return {
        license: "",
        modelfile: "",
        parameters: "",
        template: "",
        system: "",
        details: { parent_model: "", format: "", family: "", families: [], parameter_size: "", quantization_level: "" },
        messages: [],
        modified_at: new Date(0).toISOString(),
        model_info: {
            "general.name": model.id,
            "kvault.backend": route.backend.name,
            ...(model.window === undefined
                ? {}
                : { "kvault.context_length": model.window.tokens, "kvault.context_length_source": model.window.source })
        },
        capabilities: ["completion"]
    };
}

/** The backend's entry for the route's model, or a 404 naming what it lists. */
async function findModel(route: BackendRoute): Promise<RemoteModel> {
    let models;
    try {
        models = await route.backend.models();
    } catch (error) {
        throw gatewayError(error);
    }
    const model = models.find((candidate) => candidate.id === route.model);
    if (model === undefined) {
        const listed = models
            .slice(0, 10)
            .map((candidate) => `"${route.backend.name}/${candidate.id}"`)
            .join(", ");
        throw new OpenAiError(
            404,
            `model "${route.backend.name}/${route.model.slice(0, 200)}" not found: backend "${route.backend.name}" lists ${models.length === 0 ? "no model" : listed}${models.length > 10 ? ", …" : ""} (GET /api/tags).`,
            "not_found_error",
            "model_not_found",
            "model"
        );
    }
    return model;
}

/**
 * `options.num_ctx` against the window the backend states for the model (asked only when num_ctx
 * is given): over it is refused with both numbers; where the backend states none, the backend's
 * own window applies (num_ctx is a load setting, not sent).
 */
export async function checkBackendNumCtx(route: BackendRoute, body: unknown): Promise<void> {
    const options = (body as { options?: unknown }).options;
    const numCtx = typeof options === "object" && options !== null ? (options as { num_ctx?: unknown }).num_ctx : undefined;
    if (typeof numCtx !== "number") {
        return; // absent, or refused by the options' parser with its own message
    }
    const window = (await findModel(route)).window;
    if (window !== undefined && numCtx > window.tokens) {
        throw invalidRequest(
            `options.num_ctx is ${numCtx.toLocaleString("en-US")} tokens; backend "${route.backend.name}" states a window of ${window.tokens.toLocaleString("en-US")} for "${route.model}" (${window.source}). Ask for at most that.`,
            "options.num_ctx"
        );
    }
}

/**
 * What runs an Ollama turn on a backend's model: messages through RemoteBackend.chat, a raw prompt
 * through RemoteBackend.generate, the workspace the request names going upstream as `user`
 * (upstreamUser: in its key's namespace, as the gateway sends it). `format` (a grammar) is
 * refused here, before anything is sent.
 */
export function backendTurnRunner(route: BackendRoute, sampling: SamplingParams, user: string | undefined): TurnRunner {
    if (sampling.grammar !== undefined) {
        throw invalidRequest(
            `format is not sent to backend "${route.backend.name}" over Ollama's API. Leave it out, or use POST /v1/chat/completions with response_format for ${route.backend.name}/${route.model}: Kvault forwards that body as it is.`,
            "format"
        );
    }
    const { backend, model } = route;
    return {
        chat: async (turn, listener, signal) => {
            try {
                return turn.prompt === undefined
                    ? await backend.chat(model, turn, listener, signal, user)
                    : await backend.generate(model, turn, listener, signal, user);
            } catch (error) {
                throw gatewayError(error);
            }
        }
    };
}

/** `/api/embed` (and the legacy `/api/embeddings`) for a backend's model: its `/v1/embeddings`, admitted as a local embed is. */
export async function embedOnBackend(
    context: ApiContext,
    route: BackendRoute,
    inputs: readonly EmbeddingInput[],
    dimensions: number | undefined,
    response: ServerResponse,
    keyId: string | undefined
): Promise<{ readonly embeddings: readonly (readonly number[])[]; readonly promptTokens: number }> {
    const release = context.admit(keyId);
    const deadline = watchAnswer(response, context.requestTimeoutMs);
    let read;
    try {
        read = await route.backend.embed(route.model, inputs, deadline.signal);
    } catch (error) {
        throw deadline.timedOut ? deadline.timeoutError() : gatewayError(error);
    } finally {
        deadline.dispose();
        release();
    }
    const width = read.embeddings[0]!.length;
    if (dimensions !== undefined && dimensions !== width) {
        throw invalidRequest(
            `dimensions is ${dimensions}; backend "${route.backend.name}" made vectors of ${width} for "${route.model}" and Kvault does not shorten them. Send ${width} or leave it out.`,
            "dimensions"
        );
    }
    // the count the backend reported; 0 where it reports none (Ollama's field has no "unknown")
    const promptTokens = read.promptTokens ?? 0;
    noteRequest(response, { promptTokens });
    return { embeddings: read.embeddings, promptTokens };
}
