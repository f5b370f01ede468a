import type { LlamaContextSequence, Token } from "node-llama-cpp";
import { refuseContextShift } from "./refuseContextShift.js";
import type { ProbabilityRequest, SamplingOptions, SequenceSlot } from "./SequenceSlot.js";

/** A `SequenceSlot` over one node-llama-cpp context sequence. */
export class LlamaSequenceSlot implements SequenceSlot {
    constructor(
        /** @internal runtime only */
        readonly sequence: LlamaContextSequence,
        readonly index: number
    ) {}

    get numTokens(): number {
        return this.sequence.nextTokenIndex;
    }

    get tokens(): readonly number[] {
        return this.sequence.contextTokens;
    }

    /** By node-llama-cpp's token meter, which splits them into "input" (no logits) and "output" (with). */
    get numEvaluatedTokens(): number {
        const meter = this.sequence.tokenMeter;
        return meter.usedInputTokens + meter.usedOutputTokens;
    }

    async truncate(position: number): Promise<void> {
        if (position < this.sequence.nextTokenIndex) {
            await this.sequence.eraseContextTokenRanges([{ start: position, end: this.sequence.nextTokenIndex }]);
        }
    }

    async *generate(
        tokens: readonly number[],
        sampling: SamplingOptions,
        probabilities?: ProbabilityRequest
    ): AsyncGenerator<number, "eog" | "stopped", void> {
        const options = {
            temperature: sampling.temperature,
            topK: sampling.topK,
            topP: sampling.topP,
            seed: sampling.seed,
            contextShift: refuseContextShift,
            yieldEogToken: true
        };
        if (probabilities === undefined) {
            const iterator = this.sequence.evaluate(tokens as Token[], options);
            try {
                for await (const token of iterator) {
                    if (this.sequence.model.isEogToken(token)) {
                        return "eog";
                    }
                    yield token;
                }
                return "eog";
            } finally {
                await iterator.return();
            }
        }
        // With temperature 0 node-llama-cpp reports the model's whole softmax; above 0, the distribution after the sampling options.
        const iterator = this.sequence.evaluateWithMetadata(tokens as Token[], { probabilities: true }, options);
        try {
            for await (const output of iterator) {
                if (this.sequence.model.isEogToken(output.token)) {
                    return "eog";
                }
                const distribution = output.probabilities;
                const probability = distribution.get(output.token) ?? 0;
                probabilities.onToken({
                    token: output.token,
                    logprob: Math.log(probability),
                    top: mostLikely(distribution, probabilities.top)
                });
                yield output.token;
            }
            return "eog";
        } finally {
            await iterator.return();
        }
    }
}

/** The `count` most likely tokens of a distribution, most likely first: one pass, no full sort. */
function mostLikely(distribution: ReadonlyMap<number, number>, count: number): { token: number; logprob: number }[] {
    const best: [token: number, probability: number][] = [];
    if (count <= 0) {
        return [];
    }
    for (const [token, probability] of distribution) {
        if (best.length === count && probability <= best[count - 1]![1]) {
            continue;
        }
        let at = best.length === count ? count - 1 : best.length;
        best[at] = [token, probability];
        while (at > 0 && best[at - 1]![1] < best[at]![1]) {
            [best[at - 1], best[at]] = [best[at]!, best[at - 1]!];
            at--;
        }
    }
    return best.map(([token, probability]) => ({ token, logprob: Math.log(probability) }));
}
