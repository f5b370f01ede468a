import type { LlamaEmbeddingContext, LlamaModel, Token } from "node-llama-cpp";
import type { EmbeddingResult } from "../../contract/engineProtocol.js";
import { InvalidRequestError } from "../request/requestErrors.js";
import { vocabularySize } from "./rawPromptTokens.js";
import type { ComputeTurns } from "./ComputeTurns.js";
import { embeddingLlamaContext, releaseEmbeddingThreadsPromptly } from "./releaseThreadsPromptly.js";
import { takeComputeTurns } from "./takeComputeTurns.js";

const formatTokens = (count: number): string => count.toLocaleString("en-US");

/**
 * The loaded model's embedding context (llama.cpp's pooled embeddings): created on the first
 * embed, so a workspace that only chats never pays its memory, `contextSize` tokens wide (the
 * engine's window, at most the model's training context), and disposed with the model. It is a
 * context of its own: no workspace's KV is in it, and each input is evaluated alone.
 */
export class LlamaEmbedder {
    #context: Promise<LlamaEmbeddingContext> | undefined;
    #disposed = false;

    constructor(
        private readonly model: LlamaModel,
        readonly contextSize: number,
        private readonly threads: number | undefined,
        /** The model's compute turns in split mode: an embedding's graphs take theirs between the chats' (ComputeTurns). */
        private readonly computeTurns?: ComputeTurns
    ) {}

    /** The width of every vector. */
    get dimensions(): number {
        return this.model.embeddingVectorSize;
    }

    /**
     * Every input's vector, in order, scaled to unit length. All inputs are checked before any is evaluated (token ids in
     * the vocabulary, length within the context): a bad one refuses the whole call, naming it.
     */
    async embed(inputs: readonly (string | readonly number[])[]): Promise<EmbeddingResult> {
        if (this.#disposed) {
            throw new InvalidRequestError("The model was unloaded; send the embedding request again once the new one is ready.");
        }
        const context = await this.#open();
        const numVocabulary = vocabularySize(this.model);
        const planned = inputs.map((input, index) => {
            if (typeof input !== "string") {
                const bad = input.findIndex((token) => !Number.isInteger(token) || token < 0 || token >= numVocabulary);
                if (bad >= 0) {
                    throw new InvalidRequestError(
                        `Input ${index} has token id ${input[bad]} at position ${bad}; this model's vocabulary has ids 0 to ${formatTokens(numVocabulary - 1)}.`
                    );
                }
            }
            const value = typeof input === "string" ? input : (input as Token[]);
            const numTokens = context.calculateInputLength(value);
            if (numTokens > this.contextSize) {
                throw new InvalidRequestError(
                    `Input ${index} is ${formatTokens(numTokens)} tokens; the embedding context holds ${formatTokens(this.contextSize)}. Split it into shorter inputs.`
                );
            }
            if (numTokens === 0) {
                throw new InvalidRequestError(`Input ${index} is empty; give each input some text.`);
            }
            return { value, numTokens };
        });
        const embeddings: number[][] = [];
        for (const { value } of planned) {
            // one at a time: node-llama-cpp evaluates an embedding context's inputs in turn anyway
            embeddings.push(unitLength((await context.getEmbeddingFor(value)).vector));
        }
        return { dimensions: this.dimensions, embeddings, numTokens: planned.map((item) => item.numTokens) };
    }

    #open(): Promise<LlamaEmbeddingContext> {
        this.#context ??= this.model
            .createEmbeddingContext({
                contextSize: this.contextSize,
                batchSize: this.contextSize,
                ...(this.threads === undefined ? {} : { threads: this.threads })
            })
            .then((context) => {
                releaseEmbeddingThreadsPromptly(context);
                const inner = embeddingLlamaContext(context);
                if (this.computeTurns !== undefined && inner !== undefined) {
                    takeComputeTurns(inner, this.computeTurns);
                }
                return context;
            });
        const opening = this.#context;
        // a failed start is retried by the next call rather than remembered
        opening.catch(() => {
            if (this.#context === opening) {
                this.#context = undefined;
            }
        });
        return opening;
    }

    /** Idempotent; the engine calls it before it disposes the model. */
    async dispose(): Promise<void> {
        if (this.#disposed) {
            return;
        }
        this.#disposed = true;
        const context = await this.#context?.catch(() => undefined);
        await context?.dispose();
    }
}

/** The vector scaled to Euclidean length 1, as OpenAI's and Ollama's embeddings are (so a dot product is the cosine); a zero vector stays zero. */
function unitLength(vector: readonly number[]): number[] {
    const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
    return norm === 0 ? [...vector] : vector.map((value) => value / norm);
}
