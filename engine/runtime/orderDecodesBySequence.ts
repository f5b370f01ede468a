import type { LlamaContext } from "node-llama-cpp";

/** node-llama-cpp's private queue of a context's decodes (3.21). */
interface QueueInternals {
    readonly _queuedDecodes?: { readonly sequenceId: number }[];
}

/**
 * Makes `context` fill each batch in sequence order, as llama-server fills its batch slot by slot.
 * A context with a KV stream per sequence (llama.cpp's default, kv_unified off) cuts a batch into
 * micro-batches of sequences with consecutive ids in batch order (llama-batch.cpp, split_equal:
 * "accept only increasing sequence ids", each the last plus one), and every micro-batch is a pass
 * over the weights of its own. node-llama-cpp orders a batch by when each sequence queued: four
 * streams whose handoffs finished 1, 2, 3, 0 decoded as two graphs a step, 3 tokens and 1, each
 * step slower than in order (docs/measurements.md). Prompts prefilled together are cut the same way. Returns whether
 * node-llama-cpp had the queue to order; without it its own order stands.
 */
export function orderDecodesBySequence(context: LlamaContext): boolean {
    const queue = (context as unknown as QueueInternals)._queuedDecodes;
    if (!Array.isArray(queue)) {
        return false;
    }
    // each new decode goes after those of lower or equal sequence ids
    Object.defineProperty(queue, "push", {
        value: (...items: { readonly sequenceId: number }[]): number => {
            for (const item of items) {
                let at = queue.length;
                while (at > 0 && queue[at - 1]!.sequenceId > item.sequenceId) {
                    at--;
                }
                queue.splice(at, 0, item);
            }
            return queue.length;
        }
    });
    return true;
}
