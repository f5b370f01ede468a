import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { refuseContextShift } from "./refuseContextShift.js";

export interface SamplingOptions {
    /** 0 is greedy. */
    readonly temperature: number;
    readonly topK?: number;
    readonly topP?: number;
    readonly seed?: number;
}

/**
 * One llama.cpp sequence of a role's context, as the engine core sees it: token ids in, token ids
 * out, no node-llama-cpp types across the boundary.
 */
export class SequenceSlot {
    constructor(
        /** @internal runtime only */
        readonly sequence: LlamaContextSequence,
        readonly index: number
    ) {}

    /** Positions the sequence holds. */
    get numTokens(): number {
        return this.sequence.nextTokenIndex;
    }

    get tokens(): readonly number[] {
        return this.sequence.contextTokens;
    }

    /**
     * Tokens llama.cpp evaluated in this sequence so far, by node-llama-cpp's token meter (which
     * splits them into "input", evaluated without logits, and "output", evaluated with): proof of
     * what prefix reuse saved.
     */
    get numEvaluatedTokens(): number {
        const meter = this.sequence.tokenMeter;
        return meter.usedInputTokens + meter.usedOutputTokens;
    }

    /** Drops positions `[position, numTokens)` from the sequence's KV. */
    async truncate(position: number): Promise<void> {
        if (position < this.sequence.nextTokenIndex)
            await this.sequence.eraseContextTokenRanges([{ start: position, end: this.sequence.nextTokenIndex }]);
    }

    /**
     * Evaluates `tokens` and yields sampled tokens until the consumer stops iterating or an
     * end-of-generation token comes (which is not yielded). Stopping the iteration stops the
     * sequence after the current step: a cancel takes effect within one decode step.
     */
    async *generate(tokens: readonly number[], sampling: SamplingOptions): AsyncGenerator<number, "eog" | "stopped", void> {
        const iterator = this.sequence.evaluate(tokens as Token[], {
            temperature: sampling.temperature,
            topK: sampling.topK,
            topP: sampling.topP,
            seed: sampling.seed,
            contextShift: refuseContextShift,
            yieldEogToken: true
        });
        try {
            for await (const token of iterator) {
                if (this.sequence.model.isEogToken(token))
                    return "eog";
                yield token;
            }
            return "eog";
        } finally {
            await iterator.return();
        }
    }
}
