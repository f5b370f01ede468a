import type { ChatMessage, SamplingParams } from "../../contract/engineProtocol.js";
import { readStreamOptions, refuseUnservedChatFields } from "./chatCompletionFields.js";
import { invalidRequest } from "./OpenAiError.js";
import { parseChatMessages } from "./parseChatMessages.js";
import { readLogitBias, readResponseFormat } from "./readResponseFormat.js";
import { readTools, type ToolUse } from "./readTools.js";

/** A validated `POST /v1/chat/completions` body. */
export interface ChatCompletionRequest {
    readonly model: string;
    readonly messages: readonly ChatMessage[];
    readonly stream: boolean;
    readonly includeUsageInStream: boolean;
    readonly sampling: SamplingParams;
    readonly user?: string;
    /** The tools the model may call, when it has any and `tool_choice` is not "none". */
    readonly tools?: ToolUse;
}

/** Without max_tokens, an answer may take what the window leaves, bounded here. */
export const DEFAULT_MAX_TOKENS = 512;

/**
 * Validates an OpenAI chat completion body field by field; every problem is a 400 naming the
 * field. A field is served, knowingly ignored (chatCompletionFields.ts, listed in the README), or
 * refused by name: nothing a client sends is silently dropped.
 */
export function parseChatCompletion(body: unknown): ChatCompletionRequest {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw invalidRequest("The request body must be a JSON object.");
    }
    const input = body as Record<string, unknown>;
    refuseUnservedChatFields(input);

    if (typeof input.model !== "string" || input.model === "") {
        throw invalidRequest("model is required: use the id from GET /v1/models.", "model");
    }
    const messages = parseChatMessages(input.messages);

    const stream = optionalBoolean(input.stream, "stream") ?? false;
    const includeUsageInStream = readStreamOptions(input.stream_options);

    const maxTokens =
        optionalInteger(input.max_completion_tokens, "max_completion_tokens", 1, 1_048_576) ??
        optionalInteger(input.max_tokens, "max_tokens", 1, 1_048_576) ??
        DEFAULT_MAX_TOKENS;
    const temperature = optionalNumber(input.temperature, "temperature", 0, 2) ?? 1;
    const topP = optionalNumber(input.top_p, "top_p", 0, 1);
    const seed = optionalInteger(input.seed, "seed", Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    const n = optionalInteger(input.n, "n", 1, 128);
    if (n !== undefined && n !== 1) {
        throw invalidRequest(`n is ${n}; Kvault generates one choice per request (n = 1).`, "n");
    }
    const logprobs = optionalBoolean(input.logprobs, "logprobs") ?? false;
    const topLogprobs = optionalInteger(input.top_logprobs, "top_logprobs", 0, 20);
    if (topLogprobs !== undefined && !logprobs) {
        throw invalidRequest("top_logprobs needs logprobs set to true.", "top_logprobs");
    }
    const topK = optionalInteger(input.top_k, "top_k", 0, 1_000_000);
    const minP = optionalNumber(input.min_p, "min_p", 0, 1);
    const repeatPenalty = optionalNumber(input.repeat_penalty, "repeat_penalty", 0, 2);
    const repeatLastTokens = optionalInteger(input.repeat_last_n, "repeat_last_n", 0, 4096);
    const presencePenalty = optionalNumber(input.presence_penalty, "presence_penalty", -2, 2);
    const frequencyPenalty = optionalNumber(input.frequency_penalty, "frequency_penalty", -2, 2);
    const tokenBias = readLogitBias(input.logit_bias);
    const tools = readTools(input);
    const responseGrammar = readResponseFormat(input.response_format);
    if (tools?.grammar !== undefined && responseGrammar !== undefined) {
        throw invalidRequest(
            `response_format asks for JSON while tool_choice requires a tool call; one grammar holds an answer: send one of the two.`,
            "response_format"
        );
    }
    const grammar = tools?.grammar ?? responseGrammar;

    let stop: string[] | undefined;
    if (typeof input.stop === "string") {
        stop = [input.stop];
    } else if (Array.isArray(input.stop)) {
        if (input.stop.length > 4 || !input.stop.every((item) => typeof item === "string")) {
            throw invalidRequest("stop must be a string or an array of up to 4 strings.", "stop");
        }
        stop = input.stop as string[];
    } else if (input.stop !== undefined && input.stop !== null) {
        throw invalidRequest("stop must be a string or an array of up to 4 strings.", "stop");
    }

    let user: string | undefined;
    if (input.user !== undefined && input.user !== null) {
        if (typeof input.user !== "string" || input.user.length > 256) {
            throw invalidRequest("user must be a string of at most 256 characters.", "user");
        }
        user = input.user === "" ? undefined : input.user;
    }

    const seedForEngine = seed === undefined ? undefined : ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32;
    return {
        model: input.model,
        messages,
        stream,
        includeUsageInStream,
        sampling: {
            temperature,
            topP,
            topK,
            seed: seedForEngine,
            maxTokens,
            stop,
            ...(logprobs ? { logprobs: { top: topLogprobs ?? 0 } } : {}),
            minP,
            repeatPenalty,
            repeatLastTokens,
            presencePenalty,
            frequencyPenalty,
            tokenBias,
            grammar
        },
        user,
        ...(tools === undefined ? {} : { tools })
    };
}

function optionalBoolean(value: unknown, name: string): boolean | undefined {
    if (value === undefined || value === null) {
        return undefined;
    }
    if (typeof value !== "boolean") {
        throw invalidRequest(`${name} must be true or false.`, name);
    }
    return value;
}

function optionalNumber(value: unknown, name: string, min: number, max: number): number | undefined {
    if (value === undefined || value === null) {
        return undefined;
    }
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
        throw invalidRequest(`${name} must be a number from ${min} to ${max}.`, name);
    }
    return value;
}

function optionalInteger(value: unknown, name: string, min: number, max: number): number | undefined {
    const number = optionalNumber(value, name, min, max);
    if (number !== undefined && !Number.isInteger(number)) {
        throw invalidRequest(`${name} must be a whole number.`, name);
    }
    return number;
}
