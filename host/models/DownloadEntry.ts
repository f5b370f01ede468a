// What ModelDownloads keeps about one download (its table row), and the record it answers with
// (contract/models.ts ModelDownload).
import type { ModelDownload } from "../../contract/models.js";
import type { DownloadRun } from "./DownloadRun.js";
import type { PartialPart } from "./partialDownloads.js";

/** Speed is averaged over this window. */
const SPEED_WINDOW_MS = 3_000;

export interface DownloadEntry {
    readonly id: string;
    readonly source: string;
    path: string;
    startedAt: string;
    /** Its files (one, or a split model's parts) and what the server said about each when the bytes on disk started arriving; none before it is resolved. */
    parts: readonly PartialPart[];
    state: ModelDownload["state"];
    /** The most bytes on disk in this run: the count falls back while a cut chunk is fetched again. */
    downloadedBytes: number;
    totalBytes: number;
    keptBytes: number;
    resumable: boolean;
    samples: { at: number; bytes: number }[];
    /** When downloadedBytes last grew. */
    lastAdvanceAt: number;
    error: ModelDownload["error"];
    notice: string | undefined;
    run: DownloadRun | undefined;
}

/** The record of `entry` at `now` (ms, the clock its samples were taken by). */
export function downloadRecord(entry: DownloadEntry, now: number): ModelDownload {
    return {
        id: entry.id,
        source: entry.source,
        path: entry.path,
        state: entry.state,
        downloadedBytes: entry.downloadedBytes,
        totalBytes: entry.totalBytes,
        bytesPerSecond: entry.state === "downloading" ? speed(entry.samples, now) : 0,
        error: entry.state === "failed" ? entry.error : undefined,
        resumable: entry.state === "failed" && entry.resumable,
        keptBytes: entry.state === "failed" && entry.resumable ? entry.keptBytes : 0,
        notice: entry.notice
    };
}

/** Records one progress report at `now` (ms): samples older than the speed window are dropped, the last two always kept. */
export function addSpeedSample(entry: DownloadEntry, now: number): void {
    entry.samples.push({ at: now, bytes: entry.downloadedBytes });
    while (entry.samples.length > 2 && entry.samples[0]!.at < now - SPEED_WINDOW_MS) {
        entry.samples.shift();
    }
}

/** Bytes per second between the oldest sample in the window and now. */
export function speed(samples: readonly { at: number; bytes: number }[], now: number): number {
    const recent = samples.filter((sample) => sample.at >= now - SPEED_WINDOW_MS);
    if (recent.length < 2) {
        return 0;
    }
    const first = recent[0]!;
    const last = recent[recent.length - 1]!;
    const seconds = Math.max((now - first.at) / 1000, 0.001);
    return Math.max(0, (last.bytes - first.bytes) / seconds);
}
