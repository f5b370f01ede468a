import type { ModelFacts } from "../../contract/models";
import { formatCount } from "../util/formatCount";

const units = ["bytes", "KiB", "MiB", "GiB", "TiB"] as const;

/** "512 bytes", "1.5 MiB", "7.24 GiB": three significant figures from KiB up. */
export function formatBytes(bytes: number): string {
    if (!Number.isFinite(bytes) || bytes < 0)
        return "unknown";
    let value = bytes;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    if (unit === 0)
        return `${formatCount(bytes)} ${bytes === 1 ? "byte" : "bytes"}`;
    return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${units[unit]}`;
}

/** "1.1 M", "7.24 B", "512": parameter counts the way model cards write them. */
export function formatParameters(count: number): string {
    if (count >= 1e9)
        return `${(count / 1e9).toFixed(2)} B`;
    if (count >= 1e6)
        return `${(count / 1e6).toFixed(1)} M`;
    if (count >= 1e3)
        return `${(count / 1e3).toFixed(1)} K`;
    return formatCount(count);
}

/** The facts as label/value rows for the panel, in a fixed order; unknown values say so. */
export function factRows(facts: ModelFacts): { readonly key: string; readonly label: string; readonly value: string }[] {
    const rows = [
        { key: "name", label: "Name", value: facts.name ?? facts.fileName },
        { key: "architecture", label: "Architecture", value: facts.architecture },
        { key: "parameters", label: "Parameters", value: facts.parameterCount === undefined ? "not stated" : formatParameters(facts.parameterCount) },
        { key: "file-type", label: "Quantisation", value: facts.fileType ?? "not stated" },
        { key: "file-size", label: "File size", value: formatBytes(facts.fileBytes) },
        { key: "train-context", label: "Trained context", value: facts.trainContextSize === undefined ? "not stated" : `${formatCount(facts.trainContextSize)} tokens` },
        { key: "layers", label: "Layers", value: formatCount(facts.numLayers) },
        { key: "kv-per-token", label: "KV per token", value: `${formatBytes(facts.kvBytesPerToken)} (F16 K and V, all layers)` },
        {
            key: "memory-kind", label: "KV cache",
            value: facts.memory.plainKvCache ? "plain: pages can hold it (split mode)" : `not plain: ${facts.memory.reason}; the engine runs it in unified mode`
        }
    ];
    return rows;
}

/** The estimate in one or two sentences, or why there is none. */
export function estimateText(facts: ModelFacts): string {
    const estimate = facts.estimate;
    if (estimate === undefined)
        return "No memory estimate: node-llama-cpp cannot estimate this architecture.";
    const context = `${formatCount(estimate.contextSize)} tokens × ${formatCount(estimate.sequences)} ${estimate.sequences === 1 ? "sequence" : "sequences"}`;
    return `For ${context} (KV cache ${formatBytes(estimate.kvCacheBytes)}): on the CPU about ${formatBytes(estimate.cpu.ramBytes)} of RAM; ` +
        `fully on a GPU about ${formatBytes(estimate.gpu.vramBytes)} of VRAM and ${formatBytes(estimate.gpu.ramBytes)} of RAM.`;
}
