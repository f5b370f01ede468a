import { formatSize } from "./formatSize.js";

/** Cells of the bar between the brackets. */
const BAR_CELLS = 30;

export interface ProgressFigures {
    readonly name: string;
    readonly downloadedBytes: number;
    /** 0 while the size is not yet known. */
    readonly totalBytes: number;
    /** Bytes a second over the last seconds; undefined before there are two samples. */
    readonly bytesPerSecond: number | undefined;
}

/**
 * One line of a download's progress, as `ollama pull` draws it: the name, a bar, the share, the
 * bytes of the total and the speed. Without a total the bar stays empty and the bytes are said alone.
 */
export function formatProgress({ name, downloadedBytes, totalBytes, bytesPerSecond }: ProgressFigures): string {
    const share = totalBytes > 0 ? Math.min(1, downloadedBytes / totalBytes) : 0;
    const filled = Math.floor(share * BAR_CELLS);
    const bar = `[${"#".repeat(filled)}${"-".repeat(BAR_CELLS - filled)}]`;
    const percent = totalBytes > 0 ? `${Math.floor(share * 100)}%`.padStart(4) : "   ?";
    const bytes = totalBytes > 0 ? `${formatSize(downloadedBytes)} / ${formatSize(totalBytes)}` : formatSize(downloadedBytes);
    const speed = bytesPerSecond === undefined ? "" : `  ${(bytesPerSecond / 1e6).toFixed(1)} MB/s`;
    return `${name} ${bar} ${percent}  ${bytes}${speed}`;
}
