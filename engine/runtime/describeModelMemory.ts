import type { GgufInsights, LlamaModel } from "node-llama-cpp";

export type ModelMemory = { readonly plainKvCache: true } | { readonly plainKvCache: false; readonly reason: string };

/**
 * Architectures whose files may carry `<arch>.attention.sliding_window` although llama.cpp runs
 * them with one plain KV cache: llama, qwen2 and qwen3 never read the key (Mistral 7B v0.1 was
 * trained with a 4096-token window, which llama.cpp's llama graph runs as full attention), and
 * phi3 reads it and switches it off (src/models/phi3.cpp: "Phi SWA is currently disabled"), as
 * for the real Phi-3 mini 4k's 2047. node-llama-cpp's insights report the key whatever the
 * architecture does with it.
 */
const slidingWindowNotUsed: ReadonlySet<string> = new Set(["llama", "qwen2", "qwen3", "phi3"]);

/**
 * Whether the model's memory is a plain KV cache, which is what pages hold. Sliding-window,
 * hybrid and recurrent memories write other state layouts (llama.cpp's iSWA, hybrid and recurrent
 * memories); for them the engine runs in unified mode and says why.
 */
export function describeModelMemory(model: LlamaModel): ModelMemory {
    return describeInsightsMemory(model.fileInsights);
}

/** describeModelMemory from a file's insights, before (or without) loading it. */
export function describeInsightsMemory(insights: GgufInsights): ModelMemory {
    if (insights.isRecurrent) {
        return { plainKvCache: false, reason: "the model's memory is recurrent (no per-token KV cache)" };
    }
    if (insights.isHybrid) {
        return { plainKvCache: false, reason: "the model's memory is hybrid (attention KV beside recurrent state)" };
    }
    const architecture = insights.ggufFileInfo.metadata.general?.architecture;
    if (insights.swaSize !== undefined && !(architecture !== undefined && slidingWindowNotUsed.has(architecture))) {
        return {
            plainKvCache: false,
            reason:
                `the model uses sliding-window attention (${insights.swaSize} tokens), whose cache has another layout: ` +
                "llama.cpp keeps the windowed layers in a second KV cache that reuses its cells as the window moves"
        };
    }
    return { plainKvCache: true };
}
