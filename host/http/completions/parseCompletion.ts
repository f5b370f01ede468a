import type { RawPrompt, SamplingParams } from "../../../contract/engineProtocol.js";
import {
    describe,
    isAbsent,
    optionalBoolean,
    optionalInteger,
    optionalNumber,
    optionalSeed,
    optionalStop,
    refuseUnlessNeutral,
    requiredString,
    strictObject
} from "../bodyFields.js";
import { turnLimits } from "../../../contract/limits.js";
import { invalidRequest } from "../OpenAiError.js";

/** A validated `POST /v1/completions` body (OpenAI's legacy completions). */
export interface CompletionRequest {
    readonly model: string;
    readonly prompt: RawPrompt;
    readonly echo: boolean;
    readonly stream: boolean;
    readonly includeUsageInStream: boolean;
    readonly sampling: SamplingParams;
    readonly user?: string;
}

/** OpenAI's default for the legacy endpoint: without max_tokens a completion is 16 tokens. */
export const DEFAULT_COMPLETION_TOKENS = 16;

const served = [
    "model",
    "prompt",
    "echo",
    "logprobs",
    "max_tokens",
    "stop",
    "stream",
    "stream_options",
    "temperature",
    "top_p",
    "seed",
    "user",
    "n",
    "best_of",
    "suffix",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias"
] as const;

/**
 * Validates a completions body field by field; every problem is a 400 naming the field, and every
 * field is either served or refused by name: `suffix` (no fill-in-the-middle), `n` and `best_of`
 * above 1 (one choice per request), several prompts.
 */
export function parseCompletion(body: unknown): CompletionRequest {
    const input = strictObject(body, served, "The request body");
    const model = requiredString(input.model, "model", "use the id from GET /v1/models");
    const prompt = parsePrompt(input.prompt);

    refuseUnlessNeutral(input.suffix, "suffix", (value) => value === "", "Kvault does not fill in the middle; leave suffix out.");
    for (const name of ["n", "best_of"] as const) {
        const count = optionalInteger(input[name], name, 1, 128);
        if (count !== undefined && count !== 1) {
            throw invalidRequest(`${name} is ${count}; Kvault generates one completion per request (${name} = 1).`, name);
        }
    }
    const echo = optionalBoolean(input.echo, "echo") ?? false;
    const logprobs = optionalInteger(input.logprobs, "logprobs", 0, 20);
    if (echo && "tokens" in prompt) {
        throw invalidRequest("echo is served for a text prompt only: send the prompt as text, or leave echo out.", "echo");
    }
    if (echo && logprobs !== undefined) {
        throw invalidRequest(
            "echo with logprobs would need the prompt's log probabilities, which Kvault does not compute; drop one.",
            "echo"
        );
    }

    const stream = optionalBoolean(input.stream, "stream") ?? false;
    let includeUsageInStream = false;
    if (!isAbsent(input.stream_options)) {
        const options = strictObject(input.stream_options, ["include_usage"], "stream_options", "stream_options.");
        includeUsageInStream = optionalBoolean(options.include_usage, "stream_options.include_usage") ?? false;
    }

    let user: string | undefined;
    if (!isAbsent(input.user)) {
        if (typeof input.user !== "string" || input.user.length > 256) {
            throw invalidRequest("user must be a string of at most 256 characters.", "user");
        }
        user = input.user === "" ? undefined : input.user;
    }

    return {
        model,
        prompt,
        echo,
        stream,
        includeUsageInStream,
        sampling: {
            temperature: optionalNumber(input.temperature, "temperature", 0, 2) ?? 1,
            topP: optionalNumber(input.top_p, "top_p", 0, 1),
            seed: optionalSeed(input.seed, "seed"),
            maxTokens: optionalInteger(input.max_tokens, "max_tokens", 1, 1_048_576) ?? DEFAULT_COMPLETION_TOKENS,
            stop: optionalStop(input.stop, "stop", 4),
            presencePenalty: optionalNumber(input.presence_penalty, "presence_penalty", -2, 2),
            frequencyPenalty: optionalNumber(input.frequency_penalty, "frequency_penalty", -2, 2),
            tokenBias: parseLogitBias(input.logit_bias),
            ...(logprobs === undefined ? {} : { logprobs: { top: logprobs } })
        },
        user
    };
}

/** OpenAI's `logit_bias`: token id (as a string key) → bias from -100 to 100, at most turnLimits.maxTokenBiases entries. */
function parseLogitBias(value: unknown): { token: number; bias: number }[] | undefined {
    if (isAbsent(value)) {
        return undefined;
    }
    if (typeof value !== "object" || Array.isArray(value)) {
        throw invalidRequest("logit_bias must be an object of token ids to biases from -100 to 100.", "logit_bias");
    }
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > turnLimits.maxTokenBiases) {
        throw invalidRequest(`logit_bias has ${entries.length} entries; the limit is ${turnLimits.maxTokenBiases}.`, "logit_bias");
    }
    return entries.map(([key, bias]) => {
        if (!/^\d{1,10}$/.test(key)) {
            throw invalidRequest(
                `logit_bias key ${describe(key)} is not a token id; keys are token ids as strings, e.g. "50256".`,
                "logit_bias"
            );
        }
        return { token: Number(key), bias: optionalNumber(bias, `logit_bias.${key}`, -100, 100) ?? 0 };
    });
}

/** A string, a list of token ids, or a list of one of either; several prompts are refused with their count. */
function parsePrompt(value: unknown): RawPrompt {
    if (typeof value === "string") {
        return { text: value };
    }
    if (!Array.isArray(value) || value.length === 0) {
        throw invalidRequest(`prompt must be a string or a list of token ids; got ${describe(value)}.`, "prompt");
    }
    if (value.every((item) => typeof item === "number")) {
        return { tokens: tokenIds(value, "prompt") };
    }
    if (value.length > 1) {
        throw invalidRequest(`prompt holds ${value.length} prompts; Kvault serves one per request. Send them one at a time.`, "prompt");
    }
    const [only] = value as unknown[];
    if (typeof only === "string") {
        return { text: only };
    }
    if (Array.isArray(only) && only.length > 0) {
        return { tokens: tokenIds(only, "prompt[0]") };
    }
    throw invalidRequest(`prompt[0] must be a string or a non-empty list of token ids; got ${describe(only)}.`, "prompt");
}

function tokenIds(values: readonly unknown[], name: string): number[] {
    const bad = values.findIndex((token) => typeof token !== "number" || !Number.isSafeInteger(token) || token < 0);
    if (bad >= 0) {
        throw invalidRequest(`${name}[${bad}] must be a token id (a whole number from 0); got ${describe(values[bad])}.`, "prompt");
    }
    return values as number[];
}
