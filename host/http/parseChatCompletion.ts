import type { ChatMessage, SamplingParams } from "../../contract/engineProtocol.js";
import * as v from "valibot";
import { optionalBooleanField, optionalIntegerField, optionalNumberField, readApiBody, readerField } from "./apiBodySchema.js";
import { ignoredChatFields, readStreamOptions, refuseUnservedChatFields } from "./chatCompletionFields.js";
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

const maxTokensField = (name: string) => optionalIntegerField(name, 1, 1_048_576);

/**
 * The body's schema, its fields in the order they are checked: every served field with its rules,
 * every knowingly ignored one (chatCompletionFields.ts) taken as it is, any other key refused.
 */
const chatCompletionSchema = v.strictObject(
    {
        model: v.pipe(
            v.string("model is required: use the id from GET /v1/models."),
            v.nonEmpty("model is required: use the id from GET /v1/models.")
        ),
        messages: readerField(parseChatMessages),
        stream: optionalBooleanField("stream"),
        stream_options: v.optional(readerField(readStreamOptions)),
        max_completion_tokens: maxTokensField("max_completion_tokens"),
        max_tokens: maxTokensField("max_tokens"),
        temperature: optionalNumberField("temperature", 0, 2),
        top_p: optionalNumberField("top_p", 0, 1),
        seed: optionalIntegerField("seed", Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
        n: v.pipe(
            optionalIntegerField("n", 1, 128),
            v.check(
                (n) => n === undefined || n === null || n === 1,
                (issue) => `n is ${String(issue.input)}; Kvault generates one choice per request (n = 1).`
            )
        ),
        logprobs: optionalBooleanField("logprobs"),
        top_logprobs: optionalIntegerField("top_logprobs", 0, 20),
        top_k: optionalIntegerField("top_k", 0, 1_000_000),
        min_p: optionalNumberField("min_p", 0, 1),
        repeat_penalty: optionalNumberField("repeat_penalty", 0, 2),
        repeat_last_n: optionalIntegerField("repeat_last_n", 0, 4096),
        presence_penalty: optionalNumberField("presence_penalty", -2, 2),
        frequency_penalty: optionalNumberField("frequency_penalty", -2, 2),
        xtc_probability: optionalNumberField("xtc_probability", 0, 1),
        xtc_threshold: optionalNumberField("xtc_threshold", 0, 1),
        logit_bias: v.optional(readerField(readLogitBias)),
        // read together by readTools, below: tool_choice and parallel_tool_calls mean something only with tools
        tools: v.optional(v.unknown()),
        tool_choice: v.optional(v.unknown()),
        parallel_tool_calls: v.optional(v.unknown()),
        response_format: v.optional(readerField(readResponseFormat)),
        stop: v.optional(readerField(readStop)),
        user: v.nullish(
            v.pipe(
                v.string("user must be a string of at most 256 characters."),
                v.maxLength(256, "user must be a string of at most 256 characters.")
            )
        ),
        ...Object.fromEntries(ignoredChatFields.map((key) => [key, v.optional(v.unknown())]))
    },
    (issue) => (issue.expected === "never" ? `${String(issue.input)} is not served by Kvault; leave it out.` : missingField(issue))
);

/** The message for a required field left out (the schema's other keys are optional). */
function missingField(issue: v.BaseIssue<unknown>): string {
    const key = issue.path?.[0]?.key;
    return key === "messages" ? "messages must be a non-empty array." : "model is required: use the id from GET /v1/models.";
}

/** llama.cpp server's XTC fields: on when `xtc_probability` is above 0, with its threshold 0.1 unless given. */
function xtcOf(probability: number | null | undefined, threshold: number | null | undefined): Pick<SamplingParams, "xtc"> {
    return (probability ?? 0) > 0 ? { xtc: { probability: probability!, threshold: threshold ?? XTC_DEFAULT_THRESHOLD } } : {};
}

/** llama.cpp server's default XTC threshold. */
const XTC_DEFAULT_THRESHOLD = 0.1;

/** `stop`: a string, or a list of up to 4 strings. */
function readStop(value: unknown): string[] | undefined {
    if (value === undefined || value === null) {
        return undefined;
    }
    if (typeof value === "string") {
        return [value];
    }
    if (!Array.isArray(value) || value.length > 4 || !value.every((item) => typeof item === "string")) {
        throw invalidRequest("stop must be a string or an array of up to 4 strings.", "stop");
    }
    return value as string[];
}

/**
 * Validates an OpenAI chat completion body by its schema; every problem is a 400 naming the
 * field. A field is served, knowingly ignored (chatCompletionFields.ts, listed in docs/http-api.md), or
 * refused by name: nothing a client sends is silently dropped.
 */
export function parseChatCompletion(body: unknown): ChatCompletionRequest {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
        throw invalidRequest("The request body must be a JSON object.");
    }
    // the refusal of an unknown key comes first, with the lists of what is served and ignored
    refuseUnservedChatFields(body as Record<string, unknown>);
    const input = readApiBody(chatCompletionSchema, body);
    if (input.top_logprobs !== undefined && input.top_logprobs !== null && input.logprobs !== true) {
        throw invalidRequest("top_logprobs needs logprobs set to true.", "top_logprobs");
    }
    const tools = readTools(input);
    const responseGrammar = input.response_format;
    if (tools?.grammar !== undefined && responseGrammar !== undefined) {
        throw invalidRequest(
            `response_format asks for JSON while tool_choice requires a tool call; one grammar holds an answer: send one of the two.`,
            "response_format"
        );
    }
    const seed = input.seed ?? undefined;
    return {
        model: input.model,
        messages: input.messages,
        stream: input.stream ?? false,
        includeUsageInStream: input.stream_options ?? false,
        sampling: {
            temperature: input.temperature ?? 1,
            topP: input.top_p ?? undefined,
            topK: input.top_k ?? undefined,
            seed: seed === undefined ? undefined : ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32,
            maxTokens: input.max_completion_tokens ?? input.max_tokens ?? DEFAULT_MAX_TOKENS,
            stop: input.stop,
            ...(input.logprobs === true ? { logprobs: { top: input.top_logprobs ?? 0 } } : {}),
            minP: input.min_p ?? undefined,
            repeatPenalty: input.repeat_penalty ?? undefined,
            repeatLastTokens: input.repeat_last_n ?? undefined,
            presencePenalty: input.presence_penalty ?? undefined,
            frequencyPenalty: input.frequency_penalty ?? undefined,
            ...xtcOf(input.xtc_probability, input.xtc_threshold),
            tokenBias: input.logit_bias,
            grammar: tools?.grammar ?? responseGrammar
        },
        user: input.user === "" || input.user === null ? undefined : input.user,
        ...(tools === undefined ? {} : { tools })
    };
}
