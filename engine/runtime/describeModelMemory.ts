import type { GgufInsights, LlamaModel } from "node-llama-cpp";

export type ModelMemory = { readonly plainKvCache: true } | { readonly plainKvCache: false; readonly reason: string };

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
    if (insights.swaSize !== undefined) {
        return {
            plainKvCache: false,
            reason: `the model uses sliding-window attention (${insights.swaSize} tokens), whose cache has another layout`
        };
    }
    return { plainKvCache: true };
}
