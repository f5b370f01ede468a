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
