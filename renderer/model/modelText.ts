import { kvCacheTypes, type KvCacheType, type LibraryModel, type ModelDownload, type ModelFacts } from "../../contract/models.js";
import { formatCount } from "../util/formatCount.js";

const units = ["bytes", "KiB", "MiB", "GiB", "TiB"] as const;

/** "512 bytes", "1.5 MiB", "7.24 GiB": three significant figures from KiB up. */
export function formatBytes(bytes: number): string {
    if (!Number.isFinite(bytes) || bytes < 0) {
        return "unknown";
    }
    let value = bytes;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    if (unit === 0) {
        return `${formatCount(bytes)} ${bytes === 1 ? "byte" : "bytes"}`;
    }
    return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${units[unit]}`;
}

/** "1.1 M", "7.24 B", "512": parameter counts the way model cards write them. */
export function formatParameters(count: number): string {
    if (count >= 1e9) {
        return `${(count / 1e9).toFixed(2)} B`;
    }
    if (count >= 1e6) {
        return `${(count / 1e6).toFixed(1)} M`;
    }
    if (count >= 1e3) {
        return `${(count / 1e3).toFixed(1)} K`;
    }
    return formatCount(count);
}

/** "F16 128 KiB · Q8_0 68.0 KiB · Q4_0 36.0 KiB", a type the heads do not fill saying so. */
function kvPerTokenByTypeText(facts: ModelFacts): string {
    return kvCacheTypes
        .map((type) => {
            const bytes = facts.kvBytesPerTokenByType[type];
            return `${type.toUpperCase()} ${bytes === undefined ? "cannot hold it (heads not whole 32-value blocks)" : formatBytes(bytes)}`;
        })
        .join(" · ");
}

function headsText(heads: NonNullable<ModelFacts["heads"]>): string {
    const grouped =
        heads.numKvHeads < heads.numHeads
            ? ` (grouped-query: ${formatCount(heads.numHeads / heads.numKvHeads)} Q heads share each KV head)`
            : "";
    return `${formatCount(heads.numHeads)} Q, ${formatCount(heads.numKvHeads)} KV${grouped}`;
}

/**
 * The facts as label/value rows for the panel, in a fixed order; unknown values say so.
 * `kvCacheType` is the engine's: the KV per token row is in it, with every type beside it.
 */
export function factRows(
    facts: ModelFacts,
    kvCacheType: KvCacheType = "f16"
): { readonly key: string; readonly label: string; readonly value: string }[] {
    const chosen = facts.kvBytesPerTokenByType[kvCacheType];
    const rows = [
        { key: "name", label: "Name", value: facts.name ?? facts.fileName },
        { key: "architecture", label: "Architecture", value: facts.architecture },
        {
            key: "parameters",
            label: "Parameters",
            value: facts.parameterCount === undefined ? "not stated" : formatParameters(facts.parameterCount)
        },
        { key: "file-type", label: "Quantisation", value: facts.fileType ?? "not stated" },
        { key: "file-size", label: "File size", value: formatBytes(facts.fileBytes) },
        {
            key: "train-context",
            label: "Trained context",
            value: facts.trainContextSize === undefined ? "not stated" : `${formatCount(facts.trainContextSize)} tokens`
        },
        { key: "layers", label: "Layers", value: formatCount(facts.numLayers) },
        { key: "heads", label: "Heads", value: facts.heads === undefined ? "not stated" : headsText(facts.heads) },
        {
            key: "head-sizes",
            label: "Head sizes",
            value:
                facts.heads === undefined
                    ? "not stated"
                    : `K ${formatCount(facts.heads.kHeadSize)}, V ${formatCount(facts.heads.vHeadSize)} values`
        },
        {
            key: "sliding-window",
            label: "Sliding window",
            value: facts.slidingWindow === undefined ? "none" : `${formatCount(facts.slidingWindow)} tokens`
        },
        {
            key: "kv-per-token",
            label: "KV per token",
            value:
                chosen === undefined
                    ? `${kvCacheType.toUpperCase()}, the engine's KV cache type, cannot hold it; ${kvPerTokenByTypeText(facts)}`
                    : `${formatBytes(chosen)} in ${kvCacheType.toUpperCase()}, K and V of all layers (${kvPerTokenByTypeText(facts)})`
        },
        {
            key: "memory-kind",
            label: "KV cache",
            value: facts.memory.plainKvCache
                ? "plain: pages can hold it (split mode)"
                : `not plain: ${facts.memory.reason}; the engine runs it in unified mode`
        }
    ];
    return rows;
}

/** The estimate in one or two sentences, read against this machine's RAM, or why there is none. */
export function estimateText(facts: ModelFacts): string {
    const estimate = facts.estimate;
    const machine = `This machine has ${formatBytes(facts.machineRamBytes)} of RAM`;
    if (estimate === undefined) {
        return `No memory estimate: node-llama-cpp cannot estimate this architecture. ${machine}.`;
    }
    const context = `${formatCount(estimate.contextSize)} tokens × ${formatCount(estimate.sequences)} ${estimate.sequences === 1 ? "sequence" : "sequences"}`;
    const fits =
        estimate.cpu.ramBytes <= facts.machineRamBytes
            ? `${machine}: it fits on the CPU alone.`
            : `${machine}: too little to run it on the CPU alone; offload it to a GPU, or use a smaller quantisation or window.`;
    return (
        `For ${context} (KV cache ${formatBytes(estimate.kvCacheBytes)} in F16): on the CPU about ${formatBytes(estimate.cpu.ramBytes)} of RAM; ` +
        `fully on a GPU about ${formatBytes(estimate.gpu.vramBytes)} of VRAM and ${formatBytes(estimate.gpu.ramBytes)} of RAM. ${fits}`
    );
}

/** "12.3 MB/s": decimal megabytes, as download tools show speed. */
export function formatSpeed(bytesPerSecond: number): string {
    if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) {
        return "0 MB/s";
    }
    const megabytes = bytesPerSecond / 1e6;
    return `${megabytes >= 100 ? megabytes.toFixed(0) : megabytes >= 10 ? megabytes.toFixed(1) : megabytes.toFixed(2)} MB/s`;
}

/** Whole percent done, or undefined while the size is unknown. */
export function downloadPercent(download: ModelDownload): number | undefined {
    if (download.totalBytes <= 0) {
        return undefined;
    }
    return Math.min(100, Math.floor((download.downloadedBytes / download.totalBytes) * 100));
}

/** The file name a download goes to, or its source until the host knows the name. */
export function downloadName(download: ModelDownload): string {
    if (download.path !== "") {
        return download.path.split(/[\\/]/).pop() ?? download.path;
    }
    return download.source;
}

/** One line under a download's progress bar. */
export function downloadStatusText(download: ModelDownload): string {
    const percent = downloadPercent(download);
    const sizes =
        download.totalBytes > 0
            ? `${formatBytes(download.downloadedBytes)} of ${formatBytes(download.totalBytes)}`
            : formatBytes(download.downloadedBytes);
    switch (download.state) {
        case "downloading":
            return `${percent === undefined ? "Starting" : `${percent}%`} · ${sizes} · ${formatSpeed(download.bytesPerSecond)}`;
        case "done":
            return `Done · ${formatBytes(download.totalBytes > 0 ? download.totalBytes : download.downloadedBytes)}`;
        case "cancelled":
            return "Cancelled; the partial file was deleted.";
        case "failed":
            if (download.resumable) {
                return `Stopped at ${sizes}, ${formatBytes(download.keptBytes)} kept (${download.error?.code ?? "download_interrupted"}): ${download.error?.message ?? "the download did not finish."}`;
            }
            return `Failed (${download.error?.code ?? "download_failed"}): ${download.error?.message ?? "the download did not finish."}`;
    }
}

/** The first 8 hex digits of a fingerprint: enough to tell models apart at a glance. */
export function shortFingerprint(fingerprint: string): string {
    return fingerprint.slice(0, 8);
}

/** A library entry's facts as label/value rows, in a fixed order; unknown values say so. */
export function libraryRows(model: LibraryModel): { readonly key: string; readonly label: string; readonly value: string }[] {
    return [
        { key: "architecture", label: "Architecture", value: model.architecture },
        {
            key: "parameters",
            label: "Parameters",
            value: model.parameterCount === undefined ? "not stated" : formatParameters(model.parameterCount)
        },
        { key: "file-type", label: "Quantisation", value: model.fileType ?? "not stated" },
        {
            key: "train-context",
            label: "Trained context",
            value: model.trainContextSize === undefined ? "not stated" : `${formatCount(model.trainContextSize)} tokens`
        },
        { key: "kv-per-token", label: "KV per token", value: formatBytes(model.kvBytesPerToken) },
        { key: "file-size", label: "Size", value: formatBytes(model.fileBytes) },
        { key: "fingerprint", label: "Fingerprint", value: shortFingerprint(model.fingerprint) }
    ];
}

/** The name a library entry goes by: the model's own, else its file's. */
export function libraryName(model: LibraryModel): string {
    return model.name ?? model.fileName;
}
