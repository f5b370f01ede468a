import { KvaultError } from "../core/KvaultError.js";

/**
 * The longest one token of an answer held to a grammar may take, after its first: llama.cpp's
 * grammar sampler runs natively on the step every sequence of the context shares, so a grammar
 * that slips past the schema's static bound (grammarAmbiguity) holds them all for each of its
 * tokens; ending its turn after one such token bounds that to one token.
 */
export const MAX_GRAMMAR_TOKEN_MS = 20_000;

/** An answer's grammar took longer than MAX_GRAMMAR_TOKEN_MS for one token; its turn was ended. */
export class GrammarBudgetError extends KvaultError {
    readonly code = "grammar_budget_exceeded";

    constructor(
        readonly numTokens: number,
        readonly tookMs: number,
        readonly budgetMs: number
    ) {
        super(
            `The answer's grammar took ${(tookMs / 1000).toFixed(1)} s for token ${numTokens + 1} (at most ${(budgetMs / 1000).toFixed(0)} s a token), ` +
                "which holds every other workspace's stream; the turn was ended after " +
                `${numTokens.toLocaleString("en-US")} tokens. Give the schema's oneOf/anyOf branches different starts (a different first property or a const tag) or fewer nested alternatives.`
        );
    }
}
