import type { SamplingParams } from "../../../contract/engineProtocol.js";
import { turnLimits } from "../../../contract/limits.js";
import * as v from "valibot";
import { optionalIntegerField, optionalNumberField, readApiBody, readerField } from "../apiBodySchema.js";
import { isAbsent, optionalSeed, optionalStop, strictObject } from "../bodyFields.js";

/** Ollama's defaults for what a request leaves out (its Modelfile defaults). */
export const ollamaDefaults = { temperature: 0.8, topK: 40, topP: 0.9 } as const;

/** Without num_predict (or with Ollama's -1 and -2, "until the context is full"), an answer may take this many tokens, as chat completions' default. */
export const DEFAULT_OLLAMA_PREDICT = 512;

const unlisted = (issue: v.BaseIssue<unknown>): string => `options.${String(issue.input)} is not a field Kvault serves here; leave it out.`;

/** A count of tokens ("4,096") for messages. */
const tokens = (count: number): string => count.toLocaleString("en-US");

/**
 * The schema of `options` for a server whose window is `windowTokens`, its fields in the order they
 * are checked: num_ctx above the window is refused with both numbers (below it changes nothing:
 * the window is the engine's), num_predict 0 is refused (-1 and -2 are Ollama's "the default").
 */
function optionsSchema(windowTokens: number) {
    return v.strictObject(
        {
            num_ctx: v.pipe(
                optionalIntegerField("options.num_ctx", 1, Number.MAX_SAFE_INTEGER, { got: true }),
                v.check(
                    (count) => isAbsent(count) || count <= windowTokens,
                    (issue) =>
                        `options.num_ctx is ${tokens(issue.input as number)} tokens; this server's window is ${tokens(windowTokens)}. Ask for at most that, or restart Kvault with a larger --context.`
                )
            ),
            num_predict: v.pipe(
                optionalIntegerField("options.num_predict", -2, 1_048_576, { got: true }),
                v.check((count) => count !== 0, "options.num_predict is 0; ask for at least 1 token, or -1 for the default.")
            ),
            top_k: optionalIntegerField("options.top_k", 0, 1_000_000, { got: true }),
            temperature: optionalNumberField("options.temperature", 0, 2, { got: true }),
            top_p: optionalNumberField("options.top_p", 0, 1, { got: true }),
            seed: v.optional(readerField((value) => optionalSeed(value, "options.seed"))),
            stop: v.optional(readerField((value) => optionalStop(value, "options.stop", turnLimits.maxStopStrings))),
            min_p: optionalNumberField("options.min_p", 0, 1, { got: true }),
            repeat_penalty: optionalNumberField("options.repeat_penalty", 0, 2, { got: true }),
            presence_penalty: optionalNumberField("options.presence_penalty", -2, 2, { got: true }),
            frequency_penalty: optionalNumberField("options.frequency_penalty", -2, 2, { got: true }),
            // Ollama's -1, "the window", is refused too: give a count, at most 4,096
            repeat_last_n: optionalIntegerField("options.repeat_last_n", 0, 4096, { got: true })
        },
        unlisted
    );
}

/** The keys of `options` Kvault serves, in the order the refusal of another one lists them. */
const servedOptions = [
    "num_predict",
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "repeat_penalty",
    "presence_penalty",
    "frequency_penalty",
    "repeat_last_n",
    "seed",
    "stop",
    "num_ctx"
] as const;

/**
 * Ollama's `options` as the engine's sampling, read by their schema: every option Kvault serves is
 * read, and any other option is refused by name.
 */
export function parseOllamaOptions(value: unknown, windowTokens: number): SamplingParams {
    const options = isAbsent(value) ? {} : strictObject(value, servedOptions, "options", "options.");
    const read = readApiBody(optionsSchema(windowTokens), options, { unlistedCode: null, at: "options" });
    const numPredict = read.num_predict ?? undefined;
    return {
        temperature: read.temperature ?? ollamaDefaults.temperature,
        topK: read.top_k ?? ollamaDefaults.topK,
        topP: read.top_p ?? ollamaDefaults.topP,
        seed: read.seed,
        maxTokens: numPredict === undefined || numPredict < 0 ? DEFAULT_OLLAMA_PREDICT : numPredict,
        stop: read.stop,
        minP: read.min_p ?? undefined,
        repeatPenalty: read.repeat_penalty ?? undefined,
        presencePenalty: read.presence_penalty ?? undefined,
        frequencyPenalty: read.frequency_penalty ?? undefined,
        repeatLastTokens: read.repeat_last_n ?? undefined
    };
}

/**
 * `/api/embed`'s and `/api/embeddings`' `options`: num_ctx only (checked against the window), any
 * other option refused by name with that list.
 */
export function checkOllamaEmbedOptions(value: unknown, windowTokens: number): void {
    if (!isAbsent(value)) {
        parseOllamaOptions(strictObject(value, ["num_ctx"], "options", "options."), windowTokens);
    }
}
