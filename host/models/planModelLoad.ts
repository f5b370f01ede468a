// What loading one more model will take, before it is loaded (host/supervisor/EnginePool.ts): the
// settings screen's memory lines (host/settings/planEngineMemory.ts) for that model's file under the
// running engine settings, and llama.cpp's compute buffers from node-llama-cpp's estimate.
import type { EngineInfo } from "../../contract/engineProtocol.js";
import type { ModelFacts } from "../../contract/models.js";
import type { EngineSettings } from "../../contract/settings.js";
import { engineMemoryLines } from "../settings/planEngineMemory.js";

export interface ModelLoadPlan {
    /** Each part of the model's memory, as the settings screen names it. */
    readonly lines: readonly { readonly label: string; readonly bytes: number }[];
    /** The sum of the lines, RAM and GPU memory together. */
    readonly totalBytes: number;
}

/**
 * The plan of `facts`' model under `settings`: weights, each context's KV (the prefill context's too
 * in split mode), the host page pool, and compute buffers (node-llama-cpp's CPU estimate less its
 * weights and KV, when it could estimate). A file the engine will run unified (no plain KV cache)
 * is planned unified.
 */
export function planModelLoad(
    settings: EngineSettings,
    facts: ModelFacts,
    requestedMode: "split" | "unified",
    gpuBackend: boolean
): ModelLoadPlan {
    const mode = facts.memory.plainKvCache ? requestedMode : "unified";
    const lines: { label: string; bytes: number }[] = engineMemoryLines(settings, facts, mode, gpuBackend).map(({ label, bytes }) => ({
        label,
        bytes
    }));
    const estimate = facts.estimate;
    if (estimate !== undefined) {
        const compute = Math.max(0, estimate.cpu.ramBytes - facts.fileBytes - estimate.kvCacheBytes);
        lines.push({ label: "Compute buffers (node-llama-cpp's estimate)", bytes: compute });
    }
    return { lines, totalBytes: lines.reduce((total, line) => total + line.bytes, 0) };
}

/**
 * The plan of an engine that runs already, from what it measured (EngineInfo): its file's size, the
 * KV of its contexts at its measured bytes per token, and its page pool; no inspection needed.
 */
export function planRunningModel(info: EngineInfo, fileBytes: number): ModelLoadPlan {
    const perToken = info.pageBytes / info.pageTokens;
    const contextKv = info.window.limit * info.numDecodeSequences * perToken;
    const lines = [
        { label: "Model weights (the file's size)", bytes: fileBytes },
        { label: "KV of the decode context", bytes: contextKv },
        ...(info.mode.effective === "split" ? [{ label: "KV of the prefill context", bytes: contextKv }] : []),
        { label: "Host page pool", bytes: info.numPages * info.pageBytes }
    ];
    return { lines, totalBytes: lines.reduce((total, line) => total + line.bytes, 0) };
}

/** Bytes in MB with one decimal ("12.3 MB"), as the pool's messages give them. */
export function megabytes(bytes: number): string {
    return `${(bytes / (1024 * 1024)).toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 })} MB`;
}
