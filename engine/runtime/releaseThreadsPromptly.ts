import type { LlamaContext, LlamaEmbeddingContext } from "node-llama-cpp";

/** node-llama-cpp's private members of a context that its claim on the llama's threads uses (3.21). */
interface ThreadClaimInternals {
    _scheduleToFreeReservedThreads?: () => void;
    readonly _freeReservedThreads?: () => void;
}

/**
 * Makes `context` give up its claim on the llama's threads as soon as its queue of decodes is
 * empty. node-llama-cpp splits `maxThreads` among the contexts that hold a claim (its
 * ThreadsSplitter) and frees a context's claim a timer (`setTimeout(0)`) after its last decode, so
 * a context that decodes in that same turn of the event loop, say decode's first token right after
 * a handoff's prefill, or the next turn's prefill right after a stream ended, gets half the
 * threads and runs about twice as long (docs/measurements.md). Half the threads also
 * changes a decode's sums: llama.cpp's flash attention splits one query's KV among the threads
 * (ggml-cpu ops.cpp, use_split_kv_path), so greedy output then depended on the timer, and split
 * mode answered a long chat's turn unlike unified mode beside a second test on 2 cores. Freed at
 * once, a context's thread count depends only on which contexts decode at the same time.
 * A node-llama-cpp without these members keeps its own timer.
 */
export function releaseThreadsPromptly(context: LlamaContext): void {
    const internals = context as unknown as ThreadClaimInternals;
    const free = internals._freeReservedThreads;
    if (typeof internals._scheduleToFreeReservedThreads !== "function" || typeof free !== "function") {
        return;
    }
    internals._scheduleToFreeReservedThreads = () => free.call(context);
}

/**
 * The same for an embedding context, through its inner context (node-llama-cpp's private
 * `_llamaContext`, 3.21): it shares the model's llama, so a turn prefilled right after an
 * embedding (a retrieval's query) would otherwise get half the threads for its whole prompt.
 */
export function releaseEmbeddingThreadsPromptly(context: LlamaEmbeddingContext): void {
    const inner = embeddingLlamaContext(context);
    if (inner !== undefined) {
        releaseThreadsPromptly(inner);
    }
}

/** An embedding context's inner context, which decodes its inputs (node-llama-cpp's private `_llamaContext`, 3.21). */
export function embeddingLlamaContext(context: LlamaEmbeddingContext): LlamaContext | undefined {
    return (context as unknown as { _llamaContext?: LlamaContext })._llamaContext;
}
