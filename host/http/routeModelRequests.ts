// The API's `model` field picking one of several local models: a request's context reads its body,
// and when `model` names a model the pool serves besides the server's own (host/supervisor/EnginePool.ts),
// the context's engine and model id become that model's, loaded now if need be, held until the
// response closes. Every endpoint that reads its body through the context (OpenAI's, Ollama's,
// Anthropic's, the tokenizer's) is routed by this one place.
import type { ServerResponse } from "node:http";
import type { EngineClient } from "../../contract/engineProtocol.js";
import type { ModelLease } from "../supervisor/EnginePool.js";
import type { ApiContext } from "./ApiContext.js";
import { OpenAiError } from "./OpenAiError.js";

/** What routing needs of the pool. */
export interface ModelRouter {
    has(id: string): Promise<boolean>;
    acquire(id: string): Promise<ModelLease>;
}

/** The header that names the models unloaded to make room for this request's, when any was. */
export const UNLOADED_MODELS_HEADER = "X-Kvault-Unloaded-Models";

/** `base` for one request, its engine and model id those of the model its body names when the pool serves that model. */
export function routedContext(base: ApiContext, router: ModelRouter | undefined, response: ServerResponse): ApiContext {
    if (router === undefined) {
        return base;
    }
    let held: { readonly id: string; readonly engine: EngineClient } | undefined;
    return {
        ...base,
        get engine(): EngineClient {
            return held?.engine ?? base.engine;
        },
        modelId: () => held?.id ?? base.modelId(),
        readBody: async (request, reply) => {
            const body = await base.readBody(request, reply);
            const model = typeof body === "object" && body !== null ? (body as { model?: unknown }).model : undefined;
            if (held === undefined && typeof model === "string" && (await router.has(model))) {
                const lease = await acquire(router, model);
                held = { id: model, engine: lease.engine };
                response.once("close", () => lease.release());
                if (lease.unloaded.length > 0) {
                    response.setHeader(UNLOADED_MODELS_HEADER, lease.unloaded.map((id) => encodeURIComponent(id)).join(", "));
                }
            }
            return body;
        }
    };
}

/** The lease, or the pool's refusal as the API answers it: 404 unknown, 400 a file that cannot serve, 409 a changed file, 503 over the budget. */
async function acquire(router: ModelRouter, model: string): Promise<ModelLease> {
    try {
        return await router.acquire(model);
    } catch (error) {
        const code = (error as { code?: unknown }).code;
        const message = (error as Error).message;
        switch (code) {
            case "model_not_found":
                throw new OpenAiError(404, message, "not_found_error", "model_not_found", "model");
            case "model_unreadable":
            case "model_not_gguf":
            case "model_unsupported":
                throw new OpenAiError(400, message, "invalid_request_error", code, "model");
            case "model_file_changed":
                throw new OpenAiError(409, message, "invalid_request_error", "model_file_changed", "model");
            case "model_memory_budget":
                throw new OpenAiError(503, message, "server_error", "model_memory_budget", "model");
            default:
                throw error;
        }
    }
}
