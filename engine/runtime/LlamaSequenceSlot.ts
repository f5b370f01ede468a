import {
    LlamaGrammarEvaluationState,
    TokenBias as LlamaTokenBias,
    type Llama,
    type LlamaContextSequence,
    type LlamaContextSequenceRepeatPenalty,
    type LlamaGrammar,
    type SequenceEvaluateOptions,
    type Token
} from "node-llama-cpp";
import type { GrammarSpec, TokenBias } from "../../contract/engineProtocol.js";
import { createSchemaGrammar } from "./schemaGrammar.js";
import { createToolCallGrammar } from "./toolCallGrammar.js";
import { describeGrammarRefusal, readGrammarSchema } from "../../contract/rpc/readGrammarSchema.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import { refuseContextShift } from "./refuseContextShift.js";
import type { DraftCounts, ProbabilityRequest, RepeatPenalties, SamplingOptions, SequenceSlot } from "./SequenceSlot.js";
import { ungathered, type DecodeGathering } from "./gatherDecodes.js";

/** A `SequenceSlot` over one node-llama-cpp context sequence. */
export class LlamaSequenceSlot implements SequenceSlot {
    constructor(
        /** @internal runtime only */
        readonly sequence: LlamaContextSequence,
        readonly index: number,
        /** Its context's count of generating sequences, which keeps them in one batch a step (gatherDecodes). */
        private readonly gathering: DecodeGathering = ungathered
    ) {}

    get numTokens(): number {
        return this.sequence.nextTokenIndex;
    }

    get tokens(): readonly number[] {
        return this.sequence.contextTokens;
    }

    /** By node-llama-cpp's counts of the sequence's token predictions; acceptance is validated ÷ (validated + refuted). */
    get tokenPredictions(): DraftCounts {
        const { validated, refuted } = this.sequence.tokenPredictions;
        return { validated, refuted };
    }

    /** By node-llama-cpp's token meter, which splits them into "input" (no logits) and "output" (with). */
    get numEvaluatedTokens(): number {
        const meter = this.sequence.tokenMeter;
        return meter.usedInputTokens + meter.usedOutputTokens;
    }

    #repeatPenalty(penalties: RepeatPenalties | undefined): LlamaContextSequenceRepeatPenalty | undefined {
        if (penalties === undefined) {
            return undefined;
        }
        const { lastTokens } = penalties;
        return {
            // read at every step: the latest tokens of the sequence, the answer so far included
            punishTokens: () => (lastTokens === 0 ? [] : this.sequence.contextTokens.slice(-lastTokens)),
            maxPunishTokens: lastTokens,
            penalty: penalties.repeat,
            presencePenalty: penalties.presence,
            frequencyPenalty: penalties.frequency
        };
    }

    /** OpenAI's logit_bias adds to the logit, as node-llama-cpp's `{logit}` does; an id beyond the vocabulary is refused. */
    #tokenBias(biases: readonly TokenBias[] | undefined): LlamaTokenBias | undefined {
        if (biases === undefined || biases.length === 0) {
            return undefined;
        }
        const model = this.sequence.model;
        const vocabularySize = (model.fileInfo.metadata.tokenizer as { ggml?: { tokens?: readonly unknown[] } } | undefined)?.ggml?.tokens
            ?.length;
        const bias = new LlamaTokenBias(model.tokenizer);
        for (const { token, bias: logit } of biases) {
            if (vocabularySize !== undefined && token >= vocabularySize) {
                throw new InvalidRequestError(
                    `The token bias names token ${token}; this model's vocabulary has ${vocabularySize.toLocaleString("en-US")} tokens (ids 0 to ${(vocabularySize - 1).toLocaleString("en-US")}).`
                );
            }
            if (model.isEogToken(token as Token)) {
                setEndOfGenerationBias(bias, token, logit);
            } else {
                bias.set(token as Token, { logit });
            }
        }
        return bias;
    }

    async #grammarState(grammar: GrammarSpec | undefined): Promise<LlamaGrammarEvaluationState | undefined> {
        if (grammar === undefined) {
            return undefined;
        }
        const model = this.sequence.model;
        return new LlamaGrammarEvaluationState({ model, grammar: await buildGrammar(model.llama, grammar) });
    }

    async truncate(position: number): Promise<void> {
        if (position < this.sequence.nextTokenIndex) {
            // between two decode steps of the other streams
            await this.gathering.betweenSteps(() =>
                this.sequence.eraseContextTokenRanges([{ start: position, end: this.sequence.nextTokenIndex }])
            );
        }
    }

    async *generate(
        tokens: readonly number[],
        sampling: SamplingOptions,
        probabilities?: ProbabilityRequest
    ): AsyncGenerator<number, "eog" | "stopped", void> {
        const options: SequenceEvaluateOptions = {
            temperature: sampling.temperature,
            topK: sampling.topK,
            topP: sampling.topP,
            seed: sampling.seed,
            minP: sampling.minP,
            ...(sampling.xtc === undefined ? {} : { xtc: { ...sampling.xtc } }),
            repeatPenalty: this.#repeatPenalty(sampling.penalties),
            tokenBias: this.#tokenBias(sampling.tokenBias),
            grammarEvaluationState: await this.#grammarState(sampling.grammar),
            contextShift: refuseContextShift,
            yieldEogToken: true
        };
        // A token predictor drafts from the sequence's input: the history it holds and the new tokens.
        this.sequence.tokenPredictor?.updateInputTokens?.([...this.sequence.contextTokens, ...(tokens as Token[])]);
        const ended = this.gathering.generating();
        try {
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
        } finally {
            ended();
        }
    }
}

/**
 * Biases an end-of-generation token, which node-llama-cpp's `TokenBias.set` skips without a word
 * (3.21: "if (this._tokenizer.isEogToken(token)) continue"), so that OpenAI's logit_bias on one
 * (to keep an answer going, or to end it) takes effect: its map of biases goes to the sampler
 * as it is. A node-llama-cpp without that map gets the request refused, never the bias dropped.
 */
function setEndOfGenerationBias(bias: LlamaTokenBias, token: number, logit: number): void {
    const biases = (bias as unknown as { _biases?: unknown })._biases;
    if (!(biases instanceof Map)) {
        throw new InvalidRequestError(
            `The token bias names token ${token}, an end-of-generation token, which this engine's node-llama-cpp cannot bias; leave it out of logit_bias.`
        );
    }
    biases.set(token, logit);
}

/** A grammar's data as node-llama-cpp builds it; a schema the grammar cannot enforce is an InvalidRequestError naming the part. */
async function buildGrammar(llama: Llama, grammar: GrammarSpec): Promise<LlamaGrammar> {
    if (grammar.kind === "json") {
        return llama.getGrammarFor("json");
    }
    if (grammar.kind === "toolCalls") {
        return createToolCallGrammar(llama, grammar);
    }
    const read = readGrammarSchema(grammar.schema);
    if (!read.ok) {
        throw new InvalidRequestError(describeGrammarRefusal("The grammar's JSON schema", read));
    }
    try {
        return createSchemaGrammar(llama, read.schema);
    } catch (error) {
        throw new InvalidRequestError(
            `The grammar's JSON schema could not be built into a grammar (${error instanceof Error ? error.message : String(error)}); simplify the schema.`
        );
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
