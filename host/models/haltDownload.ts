// How a download run ends when it does not finish: stopped from outside (haltDownload) or failed
// (failDownload). What a resume can use is kept (complete 5 MiB chunks of a file the server can be
// asked about again), the rest deleted, and the record says which, with the numbers.
import fs from "node:fs";
import { KvaultError } from "../../engine/index.js";
import { DownloadNoSpaceError } from "./checkDownloadSpace.js";
import type { DownloadEntry } from "./DownloadEntry.js";
import type { DownloadRun } from "./DownloadRun.js";
import { bytes, describeHost, describeName, payload, seconds } from "./describeDownload.js";
import { DownloadChangedError, DownloadFailedError, DownloadInterruptedError, DownloadSizeMismatchError } from "./modelErrors.js";
import { readPartsKeptBytes, removePartialFiles } from "./partialDownloads.js";
import { whyPartsNotResumable } from "./whyRestart.js";

/** After a stop from outside: keep what a resume can use (a stall, the host stopping), delete the rest. `stallMs` is the cutoff, for the message. */
export async function haltDownload(entry: DownloadEntry, run: DownloadRun, stallMs: number): Promise<void> {
    const reason = run.stopReason!;
    if (reason === "noSpace") {
        keepOrDelete(entry, run.noSpace!.message, "download_no_space");
        return;
    }
    if (reason === "cancelled") {
        removePartialFiles(entry.path, entry.parts);
        Object.assign(entry, { state: "cancelled", resumable: false, keptBytes: 0 });
        return;
    }
    const received =
        entry.totalBytes > 0
            ? `${entry.downloadedBytes.toLocaleString("en-US")} of ${bytes(entry.totalBytes)}`
            : bytes(entry.downloadedBytes);
    if (reason === "dropped") {
        removePartialFiles(entry.path, entry.parts);
        Object.assign(entry, { state: "failed", resumable: false, keptBytes: 0 });
        entry.error = payload(
            new DownloadInterruptedError(
                `The connection to ${describeHost(entry)} dropped after ${received}, and the server does not accept range requests, so the download cannot ` +
                    "continue where it stopped (it can only send the file from its start again). The partial file was deleted; download it again."
            )
        );
        return;
    }
    const what =
        reason === "stalled"
            ? `The download of ${describeName(entry)} stopped: no data arrived for ${seconds(stallMs)} after ${received}, and Kvault's retries got no further.`
            : `Kvault stopped while ${describeName(entry)} downloaded (${received}).`;
    keepOrDelete(entry, what);
}

/** After the run threw `error`: a file that is no usable model, or changed on the server, is deleted; anything else is kept where it can be. */
export async function failDownload(entry: DownloadEntry, error: unknown): Promise<void> {
    if (error instanceof DownloadNoSpaceError) {
        keepOrDelete(entry, error.message, "download_no_space"); // a resume whose rest does not fit keeps what it has
        return;
    }
    if (error instanceof DownloadSizeMismatchError) {
        // What arrived before the sizes disagreed matched the size the download started with.
        keepOrDelete(entry, error.message, "download_size_mismatch");
        return;
    }
    if (error instanceof KvaultError && !(error instanceof DownloadFailedError)) {
        // Not a usable model, or a file that changed on the server: nothing of it is worth keeping.
        removePartialFiles(entry.path, entry.parts);
        for (const filePath of [entry.path, ...entry.parts.map((part) => part.path)]) {
            if (filePath !== "") {
                fs.rmSync(filePath, { force: true });
            }
        }
        Object.assign(entry, { state: "failed", resumable: false, keptBytes: 0 });
        entry.error =
            error instanceof DownloadChangedError
                ? payload(error)
                : { code: error.code, message: `The download is not a usable model, so it was deleted: ${error.message}` };
        return;
    }
    const detail = error instanceof Error ? error.message : String(error);
    keepOrDelete(entry, `Downloading ${entry.source.slice(0, 200)} failed: ${detail}`, "download_failed");
}

/** Failed: resumable with the complete chunks on disk when there are any and the file can be checked at resume; else deleted. */
function keepOrDelete(
    entry: DownloadEntry,
    what: string,
    code: "download_failed" | "download_interrupted" | "download_no_space" | "download_size_mismatch" = "download_interrupted"
): void {
    const why = whyPartsNotResumable(entry.parts);
    const keptBytes = why === undefined ? readPartsKeptBytes(entry.parts) : 0;
    entry.state = "failed";
    entry.keptBytes = keptBytes;
    entry.resumable = keptBytes > 0;
    let next: string;
    if (keptBytes > 0) {
        next = `${bytes(keptBytes)} are kept; Resume continues from there.`;
    } else {
        removePartialFiles(entry.path, entry.parts);
        next =
            entry.downloadedBytes === 0
                ? ""
                : `Nothing could be kept (${why ?? "no whole 5 MiB chunk had arrived, and Kvault keeps whole chunks"}); download it again.`;
    }
    const message = next === "" ? what : `${what} ${next}`;
    entry.error = payload(
        code === "download_failed"
            ? new DownloadFailedError(message)
            : code === "download_no_space"
              ? new DownloadNoSpaceError(message)
              : code === "download_size_mismatch"
                ? new DownloadSizeMismatchError(message)
                : new DownloadInterruptedError(message)
    );
}
