import type { ChatMessage, SamplingParams } from "../../contract/engineProtocol.js";
import { readStreamOptions, refuseUnservedChatFields, refuseUnservedMessageFields } from "./chatCompletionFields.js";
import { invalidRequest } from "./OpenAiError.js";
import { readLogitBias, readResponseFormat } from "./readResponseFormat.js";

/** A validated `POST /v1/chat/completions` body. */
export interface ChatCompletionRequest {
    readonly model: string;
    readonly messages: readonly ChatMessage[];
    readonly stream: boolean;
    readonly includeUsageInStream: boolean;
    readonly sampling: SamplingParams;
    readonly user?: string;
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
    if (!Array.isArray(input.messages) || input.messages.length === 0) {
        throw invalidRequest("messages must be a non-empty array.", "messages");
    }
    const messages = input.messages.map((item: unknown, index: number) => parseMessage(item, index));
    if (messages.at(-1)!.role !== "user") {
        throw invalidRequest('The last message must have role "user".', `messages[${messages.length - 1}].role`);
    }

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
    const grammar = readResponseFormat(input.response_format);
    refuseTools(input.tools, input.tool_choice);

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
        user
    };
}

function parseMessage(item: unknown, index: number): ChatMessage {
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
        throw invalidRequest(`messages[${index}] must be an object.`, `messages[${index}]`);
    }
    const message = item as Record<string, unknown>;
    refuseUnservedMessageFields(message, index);
    const role = message.role === "developer" ? "system" : message.role;
    if (role !== "system" && role !== "user" && role !== "assistant") {
        throw invalidRequest(`messages[${index}].role must be "system", "developer", "user" or "assistant".`, `messages[${index}].role`);
    }
    return { role, content: parseContent(message.content, index) };
}

function parseContent(content: unknown, index: number): string {
    if (typeof content === "string") {
        return content;
    }
    if (
        Array.isArray(content) &&
        content.every(
            (part) =>
                typeof part === "object" &&
                part !== null &&
                (part as { type?: unknown }).type === "text" &&
                typeof (part as { text?: unknown }).text === "string"
        )
    ) {
        return content.map((part) => (part as { text: string }).text).join("");
    }
    throw invalidRequest(`messages[${index}].content must be a string or an array of text parts.`, `messages[${index}].content`);
}

/** Kvault does not call tools yet: `tools` empty or absent, `tool_choice` "none" or absent. */
function refuseTools(tools: unknown, toolChoice: unknown): void {
    if (tools !== undefined && tools !== null && !(Array.isArray(tools) && tools.length === 0)) {
        throw invalidRequest(
            "tools is not served by Kvault yet (it does not call functions); leave it out.",
            "tools",
            "unsupported_parameter"
        );
    }
    if (toolChoice !== undefined && toolChoice !== null && toolChoice !== "none") {
        throw invalidRequest(
            'tool_choice is not served by Kvault yet; leave it out or send "none".',
            "tool_choice",
            "unsupported_parameter"
        );
    }
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
