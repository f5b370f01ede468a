import type { SamplingParams } from "../../../contract/engineProtocol.js";
import { turnLimits } from "../../../contract/limits.js";
import { isAbsent, optionalInteger, optionalNumber, optionalSeed, optionalStop, strictObject } from "../bodyFields.js";
import { invalidRequest } from "../OpenAiError.js";

/** Ollama's defaults for what a request leaves out (its Modelfile defaults). */
export const ollamaDefaults = { temperature: 0.8, topK: 40, topP: 0.9 } as const;

/** Without num_predict (or with Ollama's -1 and -2, "until the context is full"), an answer may take this many tokens, as chat completions' default. */
export const DEFAULT_OLLAMA_PREDICT = 512;

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
 * Ollama's `options` as the engine's sampling: every option Kvault serves is read, `num_ctx` above
 * the window is refused with both numbers (below it changes nothing: the window is the engine's),
 * and any other option is refused by name (Ollama's -1 for `repeat_last_n`, "the window", too: give
 * a count, at most 4,096).
 */
export function parseOllamaOptions(value: unknown, windowTokens: number): SamplingParams {
    const options = isAbsent(value) ? {} : strictObject(value, servedOptions, "options", "options.");
    const numCtx = optionalInteger(options.num_ctx, "options.num_ctx", 1, Number.MAX_SAFE_INTEGER);
    if (numCtx !== undefined && numCtx > windowTokens) {
        throw invalidRequest(
            `options.num_ctx is ${numCtx.toLocaleString("en-US")} tokens; this server's window is ${windowTokens.toLocaleString("en-US")}. Ask for at most that, or restart Kvault with a larger --context.`,
            "options.num_ctx"
        );
    }
    const numPredict = optionalInteger(options.num_predict, "options.num_predict", -2, 1_048_576);
    if (numPredict === 0) {
        throw invalidRequest("options.num_predict is 0; ask for at least 1 token, or -1 for the default.", "options.num_predict");
    }
    const topK = optionalInteger(options.top_k, "options.top_k", 0, 1_000_000) ?? ollamaDefaults.topK;
    return {
        temperature: optionalNumber(options.temperature, "options.temperature", 0, 2) ?? ollamaDefaults.temperature,
        topK,
        topP: optionalNumber(options.top_p, "options.top_p", 0, 1) ?? ollamaDefaults.topP,
        seed: optionalSeed(options.seed, "options.seed"),
        maxTokens: numPredict === undefined || numPredict < 0 ? DEFAULT_OLLAMA_PREDICT : numPredict,
        stop: optionalStop(options.stop, "options.stop", turnLimits.maxStopStrings),
        minP: optionalNumber(options.min_p, "options.min_p", 0, 1),
        repeatPenalty: optionalNumber(options.repeat_penalty, "options.repeat_penalty", 0, 2),
        presencePenalty: optionalNumber(options.presence_penalty, "options.presence_penalty", -2, 2),
        frequencyPenalty: optionalNumber(options.frequency_penalty, "options.frequency_penalty", -2, 2),
        repeatLastTokens: optionalInteger(options.repeat_last_n, "options.repeat_last_n", 0, 4096)
    };
}
