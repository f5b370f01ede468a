// The model's tokenizer as llama.cpp's server serves it (`/tokenize`, `/detokenize`): text to
// token ids, special-token names in it parsed as those tokens, the BOS in front when asked for and
// the model wants one; ids back to text.
import type { LlamaModel, Token } from "node-llama-cpp";
import type { TokenizeResult } from "../../contract/engineProtocol.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import { vocabularySize } from "./rawPromptTokens.js";

/** `content`'s tokens; with `withPieces`, each token's piece: its text, or its bytes when they are not whole UTF-8 alone. */
export function tokenizeText(
    model: LlamaModel,
    content: string,
    options: { readonly addSpecial: boolean; readonly withPieces: boolean },
    describeToken: (token: number) => { readonly text: string; readonly bytes: readonly number[] }
): TokenizeResult {
    const parsed: number[] = model.tokenize(content, true);
    const bos: Token | null = model.tokens.bos;
    const tokens = options.addSpecial && bos !== null && model.tokens.shouldPrependBosToken ? [bos, ...parsed] : parsed;
    if (!options.withPieces) {
        return { tokens };
    }
    return {
        tokens: tokens.map((id) => {
            const { text, bytes } = describeToken(id);
            return { id, piece: text.includes("\uFFFD") ? bytes : text };
        })
    };
}

/** The text of `tokens`, special tokens written as their text; an id outside the vocabulary is refused with the range. */
export function detokenizeTokens(model: LlamaModel, tokens: readonly number[]): string {
    const numVocabulary = vocabularySize(model);
    const bad = tokens.findIndex((token) => token >= numVocabulary);
    if (bad >= 0) {
        throw new InvalidRequestError(
            `tokens[${bad}] is ${tokens[bad]}; this model's token ids are 0 to ${(numVocabulary - 1).toLocaleString("en-US")}.`
        );
    }
    return model.detokenize(tokens as Token[], true);
}
