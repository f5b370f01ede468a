// Reading a backend's OpenAI-shaped answers: a whole chat completion, a streamed chunk, a model
// list. Each reader checks the fields Kvault uses and says which one is wrong; a field Kvault
// does not use is left alone (it is the backend's), never taken for something else.
import type { FinishReason, TurnUsage } from "../../contract/engineProtocol.js";
import type { BackendConfig } from "./BackendConfig.js";
import { BackendAnswerError, BackendMalformedError } from "./backendErrors.js";

export interface ChunkReading {
    /** Text the chunk adds ("" for none). */
    readonly text: string;
    readonly finishReason?: FinishReason;
    readonly usage?: TurnUsage;
}

export interface RemoteModel {
    readonly id: string;
    /** The window the backend states for it, with where it said so; absent when it states none there. */
    readonly window?: { readonly tokens: number; readonly source: string };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

function malformed(config: BackendConfig, what: string, problem: string): BackendMalformedError {
    return new BackendMalformedError(`Backend "${config.name}" sent a ${what} that Kvault cannot read: ${problem}.`);
}

/**
 * OpenAI's finish reasons as Kvault's: "length" is the length limit; "stop" and every other
 * reason a backend gives (tool_calls, content_filter, eos) mean the answer ended before it.
 */
function readFinish(value: unknown): FinishReason | undefined {
    if (value === null || value === undefined) {
        return undefined;
    }
    return value === "length" ? "length" : "stop";
}

/** Usage as Kvault's TurnUsage; cached tokens from `prompt_tokens_details.cached_tokens` (0 when not said). */
export function readUsage(config: BackendConfig, what: string, value: unknown): TurnUsage | undefined {
    if (value === null || value === undefined) {
        return undefined;
    }
    if (!isRecord(value) || !isCount(value.prompt_tokens) || !isCount(value.completion_tokens)) {
        throw malformed(config, what, "usage has no whole prompt_tokens and completion_tokens");
    }
    const details = value.prompt_tokens_details;
    const cached = isRecord(details) && isCount(details.cached_tokens) ? Math.min(details.cached_tokens, value.prompt_tokens) : 0;
    return {
        promptTokens: value.prompt_tokens,
        cachedPromptTokens: cached,
        evaluatedPromptTokens: value.prompt_tokens - cached,
        completionTokens: value.completion_tokens
    };
}

/** An error the backend put where an answer was due (`{"error": {"message": …}}`), or undefined. */
export function answerError(config: BackendConfig, value: Record<string, unknown>): BackendAnswerError | undefined {
    if (value.error === undefined) {
        return undefined;
    }
    const error = value.error;
    const message =
        typeof error === "string" ? error : isRecord(error) && typeof error.message === "string" ? error.message : JSON.stringify(error);
    return new BackendAnswerError(`Backend "${config.name}" ended the answer with an error: ${message.slice(0, 300)}`);
}

/** One streamed chunk's JSON text. */
export function readChunk(config: BackendConfig, data: string): ChunkReading {
    let value: unknown;
    try {
        value = JSON.parse(data);
    } catch {
        throw malformed(config, "streamed chunk", `not JSON (starting ${JSON.stringify(data.slice(0, 80))})`);
    }
    if (!isRecord(value)) {
        throw malformed(config, "streamed chunk", "not a JSON object");
    }
    const failure = answerError(config, value);
    if (failure !== undefined) {
        throw failure;
    }
    if (!Array.isArray(value.choices)) {
        throw malformed(config, "streamed chunk", "it has no choices list");
    }
    const usage = readUsage(config, "streamed chunk", value.usage);
    const choice: unknown = value.choices[0];
    if (choice === undefined) {
        return { text: "", ...(usage === undefined ? {} : { usage }) }; // the usage chunk has no choices
    }
    if (!isRecord(choice) || (choice.delta !== undefined && !isRecord(choice.delta))) {
        throw malformed(config, "streamed chunk", "choices[0] has no delta object");
    }
    const content = choice.delta?.content;
    if (content !== undefined && content !== null && typeof content !== "string") {
        throw malformed(config, "streamed chunk", "choices[0].delta.content is not a string");
    }
    const finishReason = readFinish(choice.finish_reason);
    return {
        text: typeof content === "string" ? content : "",
        ...(finishReason === undefined ? {} : { finishReason }),
        ...(usage === undefined ? {} : { usage })
    };
}

/** A whole (not streamed) chat completion: its text, finish reason and usage. */
export function readCompletion(config: BackendConfig, value: unknown): { text: string; finishReason: FinishReason; usage?: TurnUsage } {
    if (!isRecord(value)) {
        throw malformed(config, "chat completion", "not a JSON object");
    }
    const failure = answerError(config, value);
    if (failure !== undefined) {
        throw failure;
    }
    const choice: unknown = Array.isArray(value.choices) ? value.choices[0] : undefined;
    if (!isRecord(choice) || !isRecord(choice.message)) {
        throw malformed(config, "chat completion", "choices[0].message is missing");
    }
    const content = choice.message.content;
    if (content !== null && typeof content !== "string") {
        throw malformed(config, "chat completion", "choices[0].message.content is not a string");
    }
    const usage = readUsage(config, "chat completion", value.usage);
    return { text: content ?? "", finishReason: readFinish(choice.finish_reason) ?? "stop", ...(usage === undefined ? {} : { usage }) };
}

/**
 * `/v1/models`'s list: each id, with the window where the backend states one — vLLM's
 * `max_model_len`, `context_length` (SGLang, several gateways), llama-server's `meta.n_ctx`
 * (per slot: its context divided by --parallel).
 */
export function readModelList(config: BackendConfig, value: unknown): RemoteModel[] {
    if (!isRecord(value) || !Array.isArray(value.data)) {
        throw malformed(config, "model list (GET /v1/models)", "it has no data list");
    }
    return value.data.slice(0, 1_000).map((entry: unknown, index) => {
        if (!isRecord(entry) || typeof entry.id !== "string" || entry.id === "" || entry.id.length > 512) {
            throw malformed(config, "model list (GET /v1/models)", `data[${index}] has no id of 1 to 512 characters`);
        }
        const meta = isRecord(entry.meta) ? entry.meta : {};
        const window = isPositive(entry.max_model_len)
            ? { tokens: entry.max_model_len, source: "/v1/models max_model_len" }
            : isPositive(entry.context_length)
              ? { tokens: entry.context_length, source: "/v1/models context_length" }
              : isPositive(meta.n_ctx)
                ? { tokens: meta.n_ctx, source: "/v1/models meta.n_ctx (per slot)" }
                : undefined;
        return { id: entry.id, ...(window === undefined ? {} : { window }) };
    });
}

function isPositive(value: unknown): value is number {
    return isCount(value) && value > 0;
}
