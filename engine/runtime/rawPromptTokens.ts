import type { LlamaModel, Token } from "node-llama-cpp";
import type { RawPrompt } from "../../contract/engineProtocol.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import { tokenizePlainTextInSlices } from "./tokenizeInSlices.js";

/**
 * How many token ids the model has: the GGUF's token list, which llama.cpp's vocabulary is made of.
 * A token id from a client must be below it before it reaches llama.cpp, which does not check.
 */
export function vocabularySize(model: LlamaModel): number {
    const tokens = (model.fileInfo.metadata.tokenizer as { ggml?: { tokens?: unknown } } | undefined)?.ggml?.tokens;
    return Array.isArray(tokens) ? tokens.length : 0;
}

/**
 * A raw prompt's tokens, as llama.cpp's own server makes them: text is tokenized as plain text (a
 * special token's name in it stays text) with the model's BOS in front when the model wants one;
 * token ids are taken as they are, once each is known to be in the vocabulary.
 */
export async function rawPromptTokens(model: LlamaModel, prompt: RawPrompt): Promise<number[]> {
    if ("tokens" in prompt) {
        const numVocabulary = vocabularySize(model);
        const bad = prompt.tokens.findIndex((token) => !Number.isSafeInteger(token) || token < 0 || token >= numVocabulary);
        if (bad >= 0) {
            throw new InvalidRequestError(
                `prompt token ${bad} is ${String(prompt.tokens[bad])}; this model's token ids are 0 to ${(numVocabulary - 1).toLocaleString("en-US")}.`
            );
        }
        return [...prompt.tokens];
    }
    // in slices, so a multi-megabyte prompt does not hold other workspaces' streams (tokenizeInSlices.ts)
    const tokens: number[] = await tokenizePlainTextInSlices(prompt.text, model.tokenizer, undefined);
    const bos: Token | null = model.tokens.bos;
    return bos !== null && model.tokens.shouldPrependBosToken ? [bos, ...tokens] : tokens;
}
