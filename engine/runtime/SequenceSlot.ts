import type { GrammarSpec, TokenBias } from "../../contract/engineProtocol.js";

/** Drafted tokens, by whether the model's own choice confirmed them. */
export interface DraftCounts {
    readonly validated: number;
    readonly refuted: number;
}

/** A generated token's probability and the most likely alternatives, as natural logs. */
export interface TokenProbabilities {
    readonly token: number;
    readonly logprob: number;
    /** Most likely first; at most the number asked for. */
    readonly top: readonly { readonly token: number; readonly logprob: number }[];
}

export interface SamplingOptions {
    /** 0 is greedy. */
    readonly temperature: number;
    readonly topK?: number;
    readonly topP?: number;
    readonly seed?: number;
    /** 0..1; 0 is off. */
    readonly minP?: number;
    readonly penalties?: RepeatPenalties;
    /** Exclude top choices (contract/engineProtocol.ts SamplingParams.xtc); absent is off. */
    readonly xtc?: { readonly probability: number; readonly threshold: number };
    /** Added to the named tokens' logits before sampling. */
    readonly tokenBias?: readonly TokenBias[];
    /** The answer must match it; the runtime builds the grammar from this data. */
    readonly grammar?: GrammarSpec;
}

/** llama.cpp's penalties over the latest `lastTokens` tokens of the sequence (prompt and answer). */
export interface RepeatPenalties {
    /** Divides a seen token's positive logit (multiplies a negative one); 1 is off. */
    readonly repeat: number;
    /** Subtracted once from a seen token's logit; 0 is off. */
    readonly presence: number;
    /** Subtracted per time a token was seen; 0 is off. */
    readonly frequency: number;
    readonly lastTokens: number;
}

/** Penalties look back over this many tokens when the turn does not say. */
export const DEFAULT_PENALTY_LAST_TOKENS = 64;

/**
 * Whether the same prompt gives the same tokens again through greedy decoding alone, so a replay
 * (engine/audit) can check it: temperature 0 and nothing else that changes the choice.
 */
export function isPlainGreedy(sampling: SamplingOptions): boolean {
    return (
        sampling.temperature === 0 &&
        sampling.penalties === undefined &&
        sampling.xtc === undefined &&
        (sampling.tokenBias ?? []).length === 0 &&
        sampling.grammar === undefined
    );
}

/** Where a consumer of `generate` wants each token's probabilities, and how many alternatives. */
export interface ProbabilityRequest {
    readonly top: number;
    readonly onToken: (entry: TokenProbabilities) => void;
}

/**
 * One llama.cpp sequence of a role's context, as the engine core sees it: token ids in, token ids
 * out, no node-llama-cpp types across the boundary. `LlamaSequenceSlot` is the real one; unit
 * tests of scheduling and handoff give their own.
 */
export interface SequenceSlot {
    /** The sequence's index in its context, `[0, numSequences)`. */
    readonly index: number;
    /** Positions the sequence holds. */
    readonly numTokens: number;
    readonly tokens: readonly number[];
    /** Tokens evaluated in this sequence so far (input and output): proof of what prefix reuse saved. */
    readonly numEvaluatedTokens: number;
    /**
     * Speculative decoding's drafted tokens in this sequence so far (0s without speculation):
     * `validated` matched what the model chose, `refuted` did not.
     */
    readonly tokenPredictions: DraftCounts;
    /** Drops positions `[position, numTokens)` from the sequence's KV. */
    truncate(position: number): Promise<void>;
    /**
     * Evaluates `tokens` and yields sampled tokens until the consumer stops iterating or an
     * end-of-generation token comes (which is not yielded). Stopping the iteration stops the
     * sequence after the current step: a cancel takes effect within one decode step.
     */
    generate(
        tokens: readonly number[],
        sampling: SamplingOptions,
        probabilities?: ProbabilityRequest
    ): AsyncGenerator<number, "eog" | "stopped", void>;
}
