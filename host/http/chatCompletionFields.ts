// Which fields of an OpenAI chat completion body Kvault serves, which it knowingly ignores, and
// (by elimination) which it refuses with a 400 naming them. Refusing is the default: a field a
// client sends and Kvault does not serve would otherwise change nothing silently.
import * as v from "valibot";
import { isRecord } from "../../contract/rpc/fieldSchemas.js";
import { invalidRequest } from "./OpenAiError.js";

/** Fields parseChatCompletion reads and serves. */
export const servedChatFields = [
    "model",
    "messages",
    "stream",
    "stream_options",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repeat_penalty",
    "repeat_last_n",
    "presence_penalty",
    "frequency_penalty",
    "xtc_probability",
    "xtc_threshold",
    "logit_bias",
    "seed",
    "n",
    "logprobs",
    "top_logprobs",
    "stop",
    "user",
    "response_format",
    "tool_choice",
    "tools",
    "parallel_tool_calls"
] as const;

/**
 * Fields OpenAI clients send that change nothing about the answer Kvault gives, so ignoring them
 * drops nothing a client relies on: bookkeeping for OpenAI's own storage, billing and abuse
 * tracking.
 */
export const ignoredChatFields = ["store", "metadata", "service_tier", "prompt_cache_key", "safety_identifier"] as const;

/**
 * Fields of a message Kvault serves (besides an assistant's `tool_calls` and a tool message's
 * `tool_call_id`, parseChatMessages.ts); the others a client echoes back empty (null, []) are
 * ignored, anything else is refused.
 */
export const servedMessageFields = ["role", "content"] as const;
const echoedMessageFields = new Set(["refusal", "annotations", "audio", "function_call", "tool_calls"]);

const served = new Set<string>(servedChatFields);
const ignored = new Set<string>(ignoredChatFields);

/** The body's own fields: every one served or knowingly ignored; the first other one is refused by name. */
const chatBodyKeys = v.pipe(
    v.record(v.string(), v.unknown()),
    v.check(
        (body) => Object.keys(body).every((key) => served.has(key) || ignored.has(key)),
        (issue) => unservedField(Object.keys(issue.input).find((key) => !served.has(key) && !ignored.has(key))!)
    )
);

function unservedField(key: string): string {
    return (
        `${key} is not served by Kvault; leave it out. Kvault serves ${servedChatFields.join(", ")} ` +
        `and ignores ${ignoredChatFields.join(", ")} (see docs/http-api.md, Chat completions).`
    );
}

/** Refuses the first field of `body` that is neither served nor knowingly ignored, as a 400 naming it. */
export function refuseUnservedChatFields(body: Record<string, unknown>): void {
    const result = v.safeParse(chatBodyKeys, body);
    if (!result.success) {
        const key = Object.keys(body).find((name) => !served.has(name) && !ignored.has(name))!;
        throw invalidRequest(result.issues[0].message, key, "unsupported_parameter");
    }
}

/** Refuses a message field Kvault does not serve; an echoed empty one (`refusal: null`, `tool_calls: []`) is ignored. */
export function refuseUnservedMessageFields(message: Record<string, unknown>, index: number, servedForRole: readonly string[] = []): void {
    for (const [key, value] of Object.entries(message)) {
        if ((servedMessageFields as readonly string[]).includes(key) || servedForRole.includes(key)) {
            continue;
        }
        const empty = value === null || value === undefined || (Array.isArray(value) && value.length === 0) || value === "";
        if (echoedMessageFields.has(key) && empty) {
            continue;
        }
        throw invalidRequest(
            `messages[${index}].${key} is not served by Kvault (a message is its role and its text content, with an assistant's tool_calls and a tool message's tool_call_id); leave it out.`,
            `messages[${index}].${key}`,
            "unsupported_parameter"
        );
    }
}

/** `stream_options`: include_usage is served; anything else is refused by name. */
export function readStreamOptions(value: unknown): boolean {
    if (value === undefined || value === null) {
        return false;
    }
    if (!isRecord(value)) {
        throw invalidRequest("stream_options must be an object.", "stream_options");
    }
    for (const key of Object.keys(value)) {
        if (key !== "include_usage") {
            throw invalidRequest(
                `stream_options.${key} is not served by Kvault (it serves include_usage); leave it out.`,
                `stream_options.${key}`,
                "unsupported_parameter"
            );
        }
    }
    const include = value.include_usage;
    if (include !== undefined && include !== null && typeof include !== "boolean") {
        throw invalidRequest("stream_options.include_usage must be true or false.", "stream_options.include_usage");
    }
    return include === true;
}
