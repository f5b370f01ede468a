import type { LlamaContext } from "node-llama-cpp";

/** The patched addon's method (AddonContextThreadpool.cpp); absent from node-llama-cpp's prebuilt binaries. */
interface ThreadpoolAddonContext {
    attachThreadpool?(poll: number): Promise<number>;
}

/** A context's own ggml thread pool: its threads, and how long they poll for the next graph before they sleep (0–100). */
export interface ContextThreadpool {
    readonly numThreads: number;
    readonly poll: number;
}

/**
 * Gives `context` a ggml thread pool of its own for its life, as llama-server does, instead of the
 * one ggml makes and joins for every graph when none is attached. Undefined when the binary lacks
 * Kvault's patch (the prebuilt): it keeps ggml's per-graph pool, which computes the same, slower.
 * Reaches node-llama-cpp's private `_ctx`, as sequenceStateInMemory.ts does.
 */
export async function attachThreadpool(context: LlamaContext, poll: number): Promise<ContextThreadpool | undefined> {
    const addonContext = (context as unknown as { _ctx?: ThreadpoolAddonContext })._ctx;
    if (typeof addonContext?.attachThreadpool !== "function") {
        return undefined;
    }
    return { numThreads: await addonContext.attachThreadpool(poll), poll };
}
