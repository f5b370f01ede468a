// One run of one download: from asking the server, through node-llama-cpp's downloader writing the
// bytes (its progress, a stall, the disk filling), to the check that what arrived is the file the
// server had and a usable GGUF. downloadModel.ts says what the downloader does that shapes this.
import fs from "node:fs";
import { createModelDownloader, type ModelDownloader } from "node-llama-cpp";
import type { ModelDownload, ModelFacts } from "../../contract/models.js";
import { checkDownloadSpace, freeDiskBytes, type DownloadNoSpaceError } from "./checkDownloadSpace.js";
import { addSpeedSample, downloadRecord, type DownloadEntry } from "./DownloadEntry.js";
import { describeName, payload } from "./describeDownload.js";
import { downloadFileName, isDirectlyInside } from "./downloadFileName.js";
import { failDownload, fileIdentity, haltDownload } from "./haltDownload.js";
import { DownloadChangedError, DownloadFailedError } from "./modelErrors.js";
import { partialPath, preparePartialFile, removePartialFiles, removePartialRecord, writePartialRecord } from "./partialDownloads.js";
import { describeRemoteChange, probeRemoteFile, whyNotResumable } from "./probeRemoteFile.js";
import { isHttpUrl } from "./validateDownloadSource.js";
import { resolvedUrl, whyRestart } from "./whyRestart.js";

/** While bytes arrive, the free disk is checked again after each this many (statfs costs microseconds). */
const SPACE_CHECK_EVERY_BYTES = 1024 * 1024;

/**
 * Why a run was stopped from outside: the user, no progress, the host stopping, ipull restarting a
 * body it cannot place, or the disk filling up.
 */
export type StopReason = "cancelled" | "stalled" | "stopping" | "restarted" | "noSpace";

/** What a run needs from ModelDownloads, its defaults already applied. */
export interface DownloadRunContext {
    /** Where files go; created by the run. */
    readonly modelsDirectory: string;
    /** The clock speed and stalls are measured by (ms). */
    readonly now: () => number;
    /** A run that gains no new byte for this long is stopped, its partial file kept (ms). */
    readonly stallMs: number;
    /** Bytes the run leaves free on the models directory's disk. */
    readonly keepFreeBytes: number;
    /** Reads a finished file's facts, or refuses it. */
    readonly inspect: (modelPath: string) => Promise<ModelFacts>;
    readonly onProgress: ((download: ModelDownload) => void) | undefined;
    /** Called once the file arrived and is a usable GGUF, before it is listed as done; its failure is ignored. */
    readonly onDone: ((download: ModelDownload, facts: ModelFacts) => Promise<void> | void) | undefined;
    /** Every download listed, for one that writes the same file. */
    readonly entries: () => Iterable<DownloadEntry>;
}

/** A running download; it sets `entry.run` to itself as it begins and clears it when done. */
export class DownloadRun {
    readonly #context: DownloadRunContext;
    readonly #entry: DownloadEntry;
    #stopReason: StopReason | undefined = undefined;
    #resolveStopped!: (reason: StopReason) => void;
    /** Resolves with the first stop reason. */
    readonly stopped = new Promise<StopReason>((resolve) => void (this.#resolveStopped = resolve));
    #downloader: ModelDownloader | undefined = undefined;
    /** Whether a stall stops it: from the start until the bytes are all there (checking and inspecting are not stalls). */
    #watching = true;
    /** Settles when the run let go of its files (never rejects). */
    readonly done: Promise<void>;
    /** Bytes received when the free disk was last checked; undefined until the first byte is to be written. */
    #spaceCheckedAt: number | undefined = undefined;
    #noSpace: DownloadNoSpaceError | undefined = undefined;
    #finalBefore: string | undefined = undefined;

    private constructor(context: DownloadRunContext, entry: DownloadEntry, resuming: boolean) {
        this.#context = context;
        this.#entry = entry;
        entry.run = this;
        entry.samples = [];
        entry.lastAdvanceAt = context.now();
        const watchdog = setInterval(
            () => {
                if (this.#watching && this.#stopReason === undefined && context.now() - entry.lastAdvanceAt >= context.stallMs) {
                    this.stop("stalled");
                }
            },
            Math.max(10, Math.min(1_000, Math.floor(context.stallMs / 4)))
        );
        this.done = this.#run(resuming).finally(() => {
            clearInterval(watchdog);
            if (entry.run === this) {
                entry.run = undefined;
            }
        });
    }

    /** Starts a run of `entry`, from the bytes on disk when `resuming` and the server's file is unchanged. */
    static begin(context: DownloadRunContext, entry: DownloadEntry, resuming: boolean): DownloadRun {
        return new DownloadRun(context, entry, resuming);
    }

    get stopReason(): StopReason | undefined {
        return this.#stopReason;
    }

    get downloader(): ModelDownloader | undefined {
        return this.#downloader;
    }

    /** Why the disk stopped it, when it did. */
    get noSpace(): DownloadNoSpaceError | undefined {
        return this.#noSpace;
    }

    /**
     * What was at the final path when this run's bytes started (fileIdentity; "none" when nothing):
     * ipull renames its partial file there when a download of unknown size is stopped, and that
     * stray is deleted, never a model that was there before.
     */
    get finalBefore(): string | undefined {
        return this.#finalBefore;
    }

    /** Stops the run; only the first reason counts. */
    stop(reason: StopReason): void {
        if (this.#stopReason === undefined) {
            this.#stopReason = reason;
            this.#resolveStopped(reason);
        }
    }

    async #run(resuming: boolean): Promise<void> {
        const context = this.#context;
        const entry = this.#entry;
        try {
            fs.mkdirSync(context.modelsDirectory, { recursive: true, mode: 0o700 });
            // Asked before node-llama-cpp's downloader sees the URL: as it is created, it plans one entry per 5 MiB
            // of the size the server claims, so a claim of 2^50 bytes would end the process (2^28 entries). A server
            // that claims one size here and another to the downloader can still get that far: its GET is ipull's own.
            const direct = isHttpUrl(entry.source)
                ? await probeRemoteFile(entry.source, context.stallMs).catch(() => undefined)
                : undefined;
            if (this.#stopReason !== undefined) {
                return await haltDownload(entry, this, context.stallMs);
            }
            const refused = direct === undefined || direct.totalBytes === 0 ? undefined : this.#checkSpace(direct.totalBytes);
            if (refused !== undefined) {
                throw refused;
            }
            let downloader = await this.#create();
            const filePath = downloader.entrypointFilePath;
            if (!downloader.filesInfo.every((file) => isDirectlyInside(context.modelsDirectory, file.filePath))) {
                // Only an hf: reference can get here (Kvault names URL downloads itself); nothing was written yet.
                await downloader.cancel({ deleteTempFile: false }).catch(() => undefined);
                throw new DownloadFailedError(
                    `${entry.source.slice(0, 200)} resolves to the file name ${JSON.stringify(downloader.entrypointFilename ?? "")}, which is not a file name in ${context.modelsDirectory}; download it by its URL instead.`
                );
            }
            const other = [...context.entries()].find((candidate) => candidate !== entry && candidate.path === filePath);
            if (other?.state === "downloading") {
                // Its files are not ours to touch.
                await downloader.cancel({ deleteTempFile: false }).catch(() => undefined);
                entry.state = "failed";
                entry.error = payload(
                    new DownloadFailedError(
                        `Another download is writing ${filePath} now; wait for it to finish or cancel it, then download again.`
                    )
                );
                return;
            }
            entry.path = filePath;
            const url = resolvedUrl(downloader, entry.source);
            // A URL was asked above; an hf: reference is asked at the URL it resolved to.
            const remote = isHttpUrl(entry.source)
                ? direct
                : url === undefined
                  ? undefined
                  : await probeRemoteFile(url, context.stallMs).catch(() => undefined);
            if (this.#stopReason !== undefined) {
                return await haltDownload(entry, this, context.stallMs);
            }
            const hasPartial = fs.existsSync(partialPath(filePath));
            const restartReason = !resuming ? undefined : hasPartial ? whyRestart(entry.remote, remote) : "the partial file is gone";
            if (!resuming || restartReason !== undefined) {
                if (hasPartial) {
                    // node-llama-cpp read that partial file's progress when it was created: a fresh downloader must not see it.
                    await downloader.cancel({ deleteTempFile: false }).catch(() => undefined);
                    removePartialFiles(filePath);
                    if (other !== undefined && other.resumable) {
                        Object.assign(other, {
                            state: "cancelled",
                            resumable: false,
                            keptBytes: 0,
                            notice: `A download of ${entry.source.slice(0, 200)} into the same file replaced it.`
                        });
                    }
                    downloader = await this.#create();
                    if (this.#stopReason !== undefined) {
                        return await haltDownload(entry, this, context.stallMs);
                    }
                }
                if (restartReason !== undefined) {
                    entry.notice = `Started again from zero: ${restartReason}.`;
                }
                entry.remote = remote;
                entry.startedAt = new Date(context.now()).toISOString();
            }
            writePartialRecord({ id: entry.id, source: entry.source, path: filePath, remote: entry.remote, startedAt: entry.startedAt });
            entry.totalBytes = downloader.totalSize;
            entry.keptBytes = downloader.downloadedSize;
            entry.downloadedBytes = downloader.downloadedSize;
            entry.resumable = false;
            entry.lastAdvanceAt = context.now();
            const noSpace = this.#checkSpace();
            if (noSpace !== undefined) {
                throw noSpace;
            }
            for (const file of downloader.filesInfo) {
                preparePartialFile(file.filePath);
            }
            this.#finalBefore = fileIdentity(filePath);
            const finished = await Promise.race([downloader.download().then(() => true), this.stopped.then(() => false)]);
            if (!finished || this.#stopReason !== undefined) {
                return await haltDownload(entry, this, context.stallMs);
            }
            this.#watching = false;
            this.#progress(downloader.totalSize, downloader.downloadedSize);
            await this.#checkUnchanged();
            // Nothing is listed as done that the engine could not load; read in a child, as any file from the network is untrusted.
            const facts = await context.inspect(entry.path);
            removePartialRecord(entry.path);
            try {
                await context.onDone?.({ ...downloadRecord(entry, context.now()), state: "done" }, facts);
            } catch {
                // The library is a convenience; the download itself succeeded.
            }
            Object.assign(entry, { state: "done", keptBytes: 0, resumable: false });
        } catch (error) {
            if (this.#stopReason !== undefined) {
                return await haltDownload(entry, this, context.stallMs);
            }
            await failDownload(entry, this, error);
        }
    }

    /** A new downloader for the entry; rejects when the run is stopped first (ipull retries an unreachable server's first request for minutes). */
    async #create(): Promise<ModelDownloader> {
        const entry = this.#entry;
        const creating = createModelDownloader({
            modelUri: entry.source,
            dirPath: this.#context.modelsDirectory,
            // Never the URL's own last segment or the server's Content-Disposition as is; an hf: reference names its file itself.
            fileName: isHttpUrl(entry.source) ? downloadFileName(entry.source) : undefined,
            showCliProgress: false,
            skipExisting: false,
            // Kept on cancel: haltDownload decides what to delete (a stalled download keeps its chunks).
            deleteTempFileOnCancel: false,
            // Only this run's: a stopped downloader's late report must not move a resumed run's counts.
            onProgress: ({ totalSize, downloadedSize }) => {
                if (entry.run === this) {
                    this.#progress(totalSize, downloadedSize);
                }
            }
        });
        const downloader = await Promise.race([creating, this.stopped.then(() => undefined)]);
        if (downloader === undefined) {
            // It may still arrive: closed then, its partial file left to whoever stopped the run.
            void creating.then(
                (late) => late.cancel({ deleteTempFile: false }),
                () => undefined
            );
            throw new Error(`The download of ${describeName(entry)} was stopped before it started.`);
        }
        this.#downloader = downloader;
        return downloader;
    }

    /** The server's file must be the one the bytes on disk came from; otherwise they may mix two versions. */
    async #checkUnchanged(): Promise<void> {
        const entry = this.#entry;
        if (entry.remote === undefined || whyNotResumable(entry.remote) !== undefined) {
            return;
        }
        const after = await probeRemoteFile(entry.remote.url, this.#context.stallMs).catch(() => undefined);
        const change = after === undefined ? undefined : describeRemoteChange(entry.remote, after);
        if (change !== undefined) {
            throw new DownloadChangedError(
                `The file on the server changed while ${describeName(entry)} downloaded (${change}), so what arrived may mix two versions; it was deleted. Download it again.`
            );
        }
    }

    /**
     * Whether the rest of the download fits the disk, with what Kvault keeps free: before the first
     * byte from the size the server gave, then as the bytes arrive (a server that sends more than it
     * said, or gave no size). Starts the running check.
     */
    #checkSpace(totalBytes = this.#entry.totalBytes): DownloadNoSpaceError | undefined {
        const entry = this.#entry;
        this.#spaceCheckedAt = entry.downloadedBytes;
        return checkDownloadSpace({
            directory: this.#context.modelsDirectory,
            name: entry.path === "" && isHttpUrl(entry.source) ? downloadFileName(entry.source) : describeName(entry),
            remainingBytes: totalBytes > 0 ? Math.max(0, totalBytes - entry.downloadedBytes) : undefined,
            receivedBytes: entry.downloadedBytes,
            freeBytes: freeDiskBytes(this.#context.modelsDirectory),
            keepFreeBytes: this.#context.keepFreeBytes
        });
    }

    #progress(totalSize: number, downloadedSize: number): void {
        const entry = this.#entry;
        if (entry.state !== "downloading" || this.#stopReason !== undefined) {
            return;
        }
        entry.totalBytes = totalSize;
        const now = this.#context.now();
        if (downloadedSize < entry.downloadedBytes && entry.remote?.acceptsRanges === false) {
            this.stop("restarted");
            return;
        }
        if (downloadedSize > entry.downloadedBytes) {
            entry.downloadedBytes = downloadedSize;
            entry.lastAdvanceAt = now;
        }
        if (this.#spaceCheckedAt !== undefined && entry.downloadedBytes - this.#spaceCheckedAt >= SPACE_CHECK_EVERY_BYTES) {
            this.#noSpace = this.#checkSpace();
            if (this.#noSpace !== undefined) {
                this.stop("noSpace");
                return;
            }
        }
        addSpeedSample(entry, now);
        this.#context.onProgress?.(downloadRecord(entry, this.#context.now()));
    }
}
