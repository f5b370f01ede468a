import type { CustomBatchingPrioritizationStrategy } from "node-llama-cpp";

/**
 * The prefill context's batching: each batch holds the next tokens of one sequence, up to the
 * batch size, the first queued (in sequence order, orderDecodesBySequence) first.
 *
 * Why not node-llama-cpp's default, which shares each batch among the prompts queued: llama.cpp
 * cuts a batch of several sequences into micro-batches of an equal number of tokens per sequence
 * (llama-batch.cpp, split_equal), and its CPU flash attention takes its fast, tiled path only when
 * a micro-batch holds at least 64 tokens of each sequence (ggml-cpu ops.cpp, GGML_FA_TILE_Q);
 * below that it takes one dot product per query and cached token. Shared out, seven prompts of
 * 503 tokens got 77, 77, …, 50 tokens a batch, cut into micro-batches of 50 and 27 tokens a
 * sequence, and each batch took longer than the last as the prompts' cache grew; one prompt a batch
 * takes the same time a batch whatever its place, and all of them about a quarter of the time
 * (docs/measurements.md). The prompts' handoffs wait for
 * the context's lock, which node-llama-cpp holds while decodes are queued, so a shared batch
 * finished none of them sooner.
 *
 * `maxTokens` bounds a batch further while it is called for: the prefill chunk while streams decode
 * beside the prompt (EngineConfig.prefillChunkTokens), so each chunk computes between two of their steps.
 */
export function oneSequenceABatch(maxTokens: () => number = () => Infinity): CustomBatchingPrioritizationStrategy {
    return ({ items, size }) => {
        const first = items[0];
        return first === undefined ? [] : [{ item: first, processAmount: Math.min(first.tokens.length, size, maxTokens()) }];
    };
}
