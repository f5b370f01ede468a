import { KvaultError } from "../core/KvaultError.js";

export { MAX_GRAMMAR_TOKEN_MS } from "../../contract/grammarTokenBudget.js";

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
