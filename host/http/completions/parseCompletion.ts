import type { RawPrompt, SamplingParams } from "../../../contract/engineProtocol.js";
import * as v from "valibot";
import { optionalBooleanField, optionalIntegerField, optionalNumberField, readApiBody, readerField } from "../apiBodySchema.js";
import {
    describe,
    isAbsent,
    optionalBoolean,
    optionalNumber,
    optionalSeed,
    optionalStop,
    refuseUnlessNeutral,
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
    "logit_bias",
    "top_k",
    "min_p",
    "repeat_penalty",
    "repeat_last_n"
] as const;

const modelRequired = "model is required: use the id from GET /v1/models.";
const userMessage = "user must be a string of at most 256 characters.";

/** n and best_of: 1 (or absent); more is refused, one completion per request. */
const oneChoiceField = (name: "n" | "best_of") =>
    v.pipe(
        optionalIntegerField(name, 1, 128, { got: true }),
        v.check(
            (count) => count === undefined || count === null || count === 1,
            (issue) => `${name} is ${String(issue.input)}; Kvault generates one completion per request (${name} = 1).`
        )
    );

/** The body's schema, its fields in the order they are checked; a key it does not list is refused (the key check runs first). */
const completionSchema = v.strictObject(
    {
        model: v.optional(v.pipe(v.string(modelRequired), v.nonEmpty(modelRequired))),
        prompt: v.optional(readerField(parsePrompt)),
        suffix: v.optional(
            readerField((value) =>
                refuseUnlessNeutral(value, "suffix", (given) => given === "", "Kvault does not fill in the middle; leave suffix out.")
            )
        ),
        n: oneChoiceField("n"),
        best_of: oneChoiceField("best_of"),
        echo: optionalBooleanField("echo"),
        logprobs: optionalIntegerField("logprobs", 0, 20, { got: true }),
        stream: optionalBooleanField("stream"),
        stream_options: v.optional(readerField(readStreamOptions)),
        user: v.nullish(v.pipe(v.string(userMessage), v.maxLength(256, userMessage))),
        temperature: optionalNumberField("temperature", 0, 2, { got: true }),
        top_p: optionalNumberField("top_p", 0, 1, { got: true }),
        seed: v.optional(readerField((value) => optionalSeed(value, "seed"))),
        max_tokens: optionalIntegerField("max_tokens", 1, 1_048_576, { got: true }),
        stop: v.optional(readerField((value) => optionalStop(value, "stop", 4))),
        presence_penalty: optionalNumberField("presence_penalty", -2, 2, { got: true }),
        frequency_penalty: optionalNumberField("frequency_penalty", -2, 2, { got: true }),
        logit_bias: v.optional(readerField(parseLogitBias)),
        // llama.cpp's samplers under vLLM's, SGLang's and llama-server's names, as chat completions take them
        // (what a backend's turn sends, host/backends/RemoteBackend.ts samplingFields)
        top_k: optionalIntegerField("top_k", 0, 1_000_000, { got: true }),
        min_p: optionalNumberField("min_p", 0, 1, { got: true }),
        repeat_penalty: optionalNumberField("repeat_penalty", 0, 2, { got: true }),
        repeat_last_n: optionalIntegerField("repeat_last_n", 0, 4096, { got: true })
    },
    (issue) => `${String(issue.input)} is not a field Kvault serves here; leave it out.`
);

/**
 * Validates a completions body by its schema; every problem is a 400 naming the field, and every
 * field is either served or refused by name: `suffix` (no fill-in-the-middle), `n` and `best_of`
 * above 1 (one choice per request), several prompts.
 */
export function parseCompletion(body: unknown): CompletionRequest {
    // the unknown key's refusal first, with the list of what is served
    strictObject(body, served, "The request body");
    const input = readApiBody(completionSchema, body, { unlistedCode: null });
    if (input.model === undefined) {
        throw invalidRequest(modelRequired, "model");
    }
    const prompt = input.prompt ?? parsePrompt(undefined);
    const echo = input.echo ?? false;
    const logprobs = input.logprobs ?? undefined;
    if (echo && "tokens" in prompt) {
        throw invalidRequest("echo is served for a text prompt only: send the prompt as text, or leave echo out.", "echo");
    }
    if (echo && logprobs !== undefined) {
        throw invalidRequest(
            "echo with logprobs would need the prompt's log probabilities, which Kvault does not compute; drop one.",
            "echo"
        );
    }
    return {
        model: input.model,
        prompt,
        echo,
        stream: input.stream ?? false,
        includeUsageInStream: input.stream_options ?? false,
        sampling: {
            temperature: input.temperature ?? 1,
            topP: input.top_p ?? undefined,
            seed: input.seed,
            maxTokens: input.max_tokens ?? DEFAULT_COMPLETION_TOKENS,
            stop: input.stop,
            presencePenalty: input.presence_penalty ?? undefined,
            frequencyPenalty: input.frequency_penalty ?? undefined,
            tokenBias: input.logit_bias,
            topK: input.top_k ?? undefined,
            minP: input.min_p ?? undefined,
            repeatPenalty: input.repeat_penalty ?? undefined,
            repeatLastTokens: input.repeat_last_n ?? undefined,
            ...(logprobs === undefined ? {} : { logprobs: { top: logprobs } })
        },
        user: typeof input.user === "string" && input.user !== "" ? input.user : undefined
    };
}

/** `stream_options`: include_usage, and no other option. */
function readStreamOptions(value: unknown): boolean {
    if (isAbsent(value)) {
        return false;
    }
    const options = strictObject(value, ["include_usage"], "stream_options", "stream_options.");
    return optionalBoolean(options.include_usage, "stream_options.include_usage") ?? false;
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
