// Reading a backend's OpenAI-shaped answers: a whole chat completion, a streamed chunk, a model
// list, a text completion (`/v1/completions`, whole or streamed) and a list of embeddings. Each
// reader checks the fields Kvault uses and says which one is wrong; a field Kvault does not use is
// left alone (it is the backend's), never taken for something else.
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

/**
 * A streamed chunk's JSON text as an object with a choices list (an error event thrown as
 * BackendAnswerError), with its usage; what chat's and the text completion's chunks share.
 */
function readChunkObject(
    config: BackendConfig,
    data: string,
    what: string
): { readonly value: Record<string, unknown> & { readonly choices: unknown[] }; readonly usage?: TurnUsage } {
    let value: unknown;
    try {
        value = JSON.parse(data);
    } catch {
        throw malformed(config, what, `not JSON (starting ${JSON.stringify(data.slice(0, 80))})`);
    }
    if (!isRecord(value)) {
        throw malformed(config, what, "not a JSON object");
    }
    const failure = answerError(config, value);
    if (failure !== undefined) {
        throw failure;
    }
    if (!Array.isArray(value.choices)) {
        throw malformed(config, what, "it has no choices list");
    }
    const usage = readUsage(config, what, value.usage);
    return { value: value as Record<string, unknown> & { choices: unknown[] }, ...(usage === undefined ? {} : { usage }) };
}

/** One streamed chunk's JSON text. */
export function readChunk(config: BackendConfig, data: string): ChunkReading {
    const { value, usage } = readChunkObject(config, data, "streamed chunk");
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

/** One streamed chunk of a text completion (`/v1/completions`): `choices[0].text`, its finish reason, the usage. */
export function readTextChunk(config: BackendConfig, data: string): ChunkReading {
    const { value, usage } = readChunkObject(config, data, "streamed text completion chunk");
    const choice: unknown = value.choices[0];
    if (choice === undefined) {
        return { text: "", ...(usage === undefined ? {} : { usage }) }; // the usage chunk has no choices
    }
    const text = readChoiceText(config, "streamed text completion chunk", choice);
    const finishReason = readFinish((choice as Record<string, unknown>).finish_reason);
    return { text, ...(finishReason === undefined ? {} : { finishReason }), ...(usage === undefined ? {} : { usage }) };
}

/** A whole (not streamed) text completion: `choices[0].text`, its finish reason (required: an answer says how it ended) and usage. */
export function readTextCompletion(config: BackendConfig, value: unknown): { text: string; finishReason: FinishReason; usage?: TurnUsage } {
    const what = "text completion";
    if (!isRecord(value)) {
        throw malformed(config, what, "not a JSON object");
    }
    const failure = answerError(config, value);
    if (failure !== undefined) {
        throw failure;
    }
    const choice: unknown = Array.isArray(value.choices) ? value.choices[0] : undefined;
    const text = readChoiceText(config, what, choice);
    const finishReason = readFinish((choice as Record<string, unknown>).finish_reason);
    if (finishReason === undefined) {
        throw malformed(config, what, "choices[0].finish_reason is missing");
    }
    const usage = readUsage(config, what, value.usage);
    return { text, finishReason, ...(usage === undefined ? {} : { usage }) };
}

function readChoiceText(config: BackendConfig, what: string, choice: unknown): string {
    if (!isRecord(choice)) {
        throw malformed(config, what, "choices[0] is missing");
    }
    if (typeof choice.text !== "string") {
        throw malformed(config, what, "choices[0].text is not a string");
    }
    return choice.text;
}

/** A list of embeddings (`/v1/embeddings`): one vector per input, in the order of the inputs, and the prompt tokens when said. */
export interface EmbeddingsReading {
    readonly embeddings: readonly (readonly number[])[];
    readonly promptTokens?: number;
}

/**
 * `/v1/embeddings`' answer: `data[]`, each `embedding` a list of finite numbers (or, when
 * `encoding_format: "base64"` was asked for, base64 of little-endian float32), all of one width,
 * put in the order of their `index` (the position where an entry has none).
 */
export function readEmbeddingList(config: BackendConfig, value: unknown): EmbeddingsReading {
    const what = "list of embeddings";
    if (!isRecord(value)) {
        throw malformed(config, what, "not a JSON object");
    }
    const failure = answerError(config, value);
    if (failure !== undefined) {
        throw failure;
    }
    if (!Array.isArray(value.data) || value.data.length === 0) {
        throw malformed(config, what, "it has no data list with an entry");
    }
    const ordered: (readonly number[] | undefined)[] = new Array<undefined>(value.data.length).fill(undefined);
    value.data.forEach((entry: unknown, position) => {
        if (!isRecord(entry)) {
            throw malformed(config, what, `data[${position}] is not an object`);
        }
        const index = entry.index === undefined ? position : entry.index;
        if (!isCount(index) || index >= ordered.length || ordered[index] !== undefined) {
            throw malformed(config, what, `data[${position}].index is not a distinct position from 0 to ${ordered.length - 1}`);
        }
        ordered[index] = readVector(config, what, entry.embedding, position);
    });
    const embeddings = ordered as (readonly number[])[];
    const width = embeddings[0]!.length;
    const other = embeddings.findIndex((vector) => vector.length !== width);
    if (other >= 0) {
        throw malformed(config, what, `vector ${other} has ${embeddings[other]!.length} numbers and vector 0 has ${width}`);
    }
    const usage = value.usage;
    const promptTokens = isRecord(usage) && isCount(usage.prompt_tokens) ? usage.prompt_tokens : undefined;
    if (usage !== undefined && usage !== null && promptTokens === undefined) {
        throw malformed(config, what, "usage has no whole prompt_tokens");
    }
    return { embeddings, ...(promptTokens === undefined ? {} : { promptTokens }) };
}

function readVector(config: BackendConfig, what: string, value: unknown, position: number): readonly number[] {
    if (typeof value === "string") {
        const bytes = Buffer.from(value, "base64");
        if (bytes.byteLength === 0 || bytes.byteLength % 4 !== 0 || bytes.toString("base64") !== value) {
            throw malformed(config, what, `data[${position}].embedding is a string but not base64 of float32 values`);
        }
        const decoded = Array.from({ length: bytes.byteLength / 4 }, (_, index) => bytes.readFloatLE(index * 4));
        if (!decoded.every(Number.isFinite)) {
            throw malformed(config, what, `data[${position}].embedding holds a float32 that is not finite`);
        }
        return decoded;
    }
    if (!Array.isArray(value) || value.length === 0 || !value.every((number) => typeof number === "number" && Number.isFinite(number))) {
        throw malformed(config, what, `data[${position}].embedding is not a non-empty list of finite numbers`);
    }
    return value as number[];
}
