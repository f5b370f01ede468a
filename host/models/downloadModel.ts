// Model downloads for the model manager (contract/rpc.ts startDownload, resumeDownload):
// node-llama-cpp's createModelDownloader into the host's models directory, a small table of what
// runs and ran, resuming a download that stopped part-way, and a check that what arrived is a
// usable GGUF before anyone can load it.
//
// What node-llama-cpp 3.21.1's downloader (ipull 3.9) does, which shapes this file:
// - It writes `<file>.ipull` and records which 5 MiB chunks are complete (partialDownloads.ts); a
//   new downloader for the same file asks only for the missing chunks, with Range requests. That
//   is the resume. A chunk cut short is fetched again whole.
// - It retries a dropped connection by itself (150 times, backing off to 5 s between tries), from
//   the start of the chunk: one drop never fails a download, and a connection that stays down
//   keeps it retrying for many minutes. So a download that gains no new byte for `stallMs` is
//   stopped here, its complete chunks kept.
// - It keeps no ETag: continuing a file that changed on the server would splice two versions.
//   The server is asked (probeRemoteFile) when a download starts, when it resumes and when it ends.
// - From a server without Range support its retry takes the body from byte 0 again but writes it
//   where the cut chunk began, corrupting the file; a byte count that falls there stops the
//   download and deletes it.
// - It names the file after the URL's last path segment, or the server's Content-Disposition: a
//   URL ending in `/` gave an empty name, and it wrote `<models>.ipull` beside the models
//   directory. So Kvault names every URL download itself (downloadFileName), and checks that an
//   `hf:` one lands directly inside the directory.
// - It creates its partial file with the process's umask (0644, readable by every user); Kvault
//   creates it first, 0600 (preparePartialFile), and ipull then writes into that one.
// - It writes whatever the server sends, for as long as it sends it (an endless body filled a disk
//   at 250 MB/s); the free disk is checked before the first byte and again as the bytes arrive.
import crypto from "node:crypto";
import fs from "node:fs";
import { createModelDownloader, type ModelDownloader } from "node-llama-cpp";
import type { ModelDownload, ModelFacts } from "../../contract/models.js";
import { KvaultError } from "../../engine/index.js";
import {
    DownloadChangedError,
    DownloadFailedError,
    DownloadInterruptedError,
    DownloadNotResumableError,
    DownloadUnknownError
} from "./modelErrors.js";
import { checkDownloadSpace, DEFAULT_KEEP_FREE_BYTES, DownloadNoSpaceError, freeDiskBytes } from "./checkDownloadSpace.js";
import { downloadFileName, isDirectlyInside } from "./downloadFileName.js";
import { ignoreIpullRejections } from "./ignoreIpullRejections.js";
import { inspectDefaults } from "./inspectModelFile.js";
import { inspectModelInChild } from "./inspectModelInChild.js";
import {
    partialPath,
    preparePartialFile,
    readKeptBytes,
    readPartialRecords,
    removePartialFiles,
    removePartialRecord,
    writePartialRecord,
    type RemoteFileFacts
} from "./partialDownloads.js";
import { describeRemoteChange, probeRemoteFile, whyNotResumable } from "./probeRemoteFile.js";
import { isHttpUrl, validateDownloadSource } from "./validateDownloadSource.js";

/** Speed is averaged over this window. */
const SPEED_WINDOW_MS = 3_000;
/** Without a new byte for this long a download is stopped and kept to resume; ipull's own retries back off to 5 s. */
export const DEFAULT_DOWNLOAD_STALL_MS = 60_000;
/** How long cancel and dispose wait for a run to let go of its files (a hung connection must not hang them). */
const HALT_WAIT_MS = 5_000;
/**
 * ipull records a finished chunk with a write queued behind a lock, which can land just after
 * `cancel()` resolved (and would create the partial file again); files are read or deleted once it has.
 */
const PROGRESS_WRITE_SETTLE_MS = 100;
/** While bytes arrive, the free disk is checked again after each this many (statfs costs microseconds). */
const SPACE_CHECK_EVERY_BYTES = 1024 * 1024;

export { validateDownloadSource } from "./validateDownloadSource.js";

/**
 * Why a run was stopped from outside: the user, no progress, the host stopping, ipull restarting a
 * body it cannot place, or the disk filling up.
 */
type StopReason = "cancelled" | "stalled" | "stopping" | "restarted" | "noSpace";

interface Run {
    stopReason: StopReason | undefined;
    /** Resolves with the first stop reason. */
    readonly stopped: Promise<StopReason>;
    stop(reason: StopReason): void;
    downloader: ModelDownloader | undefined;
    /** Whether a stall stops it: from the start until the bytes are all there (checking and inspecting are not stalls). */
    watching: boolean;
    done: Promise<void>;
    /** Bytes received when the free disk was last checked; undefined until the first byte is to be written. */
    spaceCheckedAt: number | undefined;
    /** Why the disk stopped it, when it did. */
    noSpace: DownloadNoSpaceError | undefined;
    /**
     * What was at the final path when this run's bytes started (fileIdentity; NO_FILE when nothing):
     * ipull renames its partial file there when a download of unknown size is stopped, and that
     * stray is deleted, never a model that was there before.
     */
    finalBefore: string | undefined;
}

interface DownloadEntry {
    readonly id: string;
    readonly source: string;
    path: string;
    startedAt: string;
    /** What the server said when the bytes on disk started arriving. */
    remote: RemoteFileFacts | undefined;
    state: ModelDownload["state"];
    /** The most bytes ipull reported in this run: its count falls back while it fetches a cut chunk again. */
    downloadedBytes: number;
    totalBytes: number;
    keptBytes: number;
    resumable: boolean;
    samples: { at: number; bytes: number }[];
    /** When downloadedBytes last grew. */
    lastAdvanceAt: number;
    error: ModelDownload["error"];
    notice: string | undefined;
    run: Run | undefined;
}

export interface ModelDownloadsOptions {
    /** Where files go; created on the first download. Partial downloads found there at start are listed, resumable. */
    readonly modelsDirectory: string;
    /** For tests: the clock speed and stalls are measured by. */
    readonly now?: () => number;
    /** Called with the record after each progress report of node-llama-cpp's downloader. */
    readonly onProgress?: (download: ModelDownload) => void;
    /** A download that gains no new byte for this long is stopped, its partial file kept (ms); default DEFAULT_DOWNLOAD_STALL_MS. */
    readonly stallMs?: number;
    /** Called once a download arrived and is a usable GGUF, before it is listed as done (the model library); its failure is ignored. */
    readonly onDone?: (download: ModelDownload, facts: ModelFacts) => Promise<void> | void;
    /** Reads a finished file's facts, or refuses it (model_unreadable, …); by default in a child process (inspectModelInChild). */
    readonly inspect?: (modelPath: string) => Promise<ModelFacts>;
    /** Bytes every download leaves free on the models directory's disk; default DEFAULT_KEEP_FREE_BYTES. */
    readonly keepFreeBytes?: number;
}

/** The host's downloads: start, resume, list, cancel. Finished entries stay listed until the host stops. */
export class ModelDownloads {
    readonly #entries = new Map<string, DownloadEntry>();
    readonly #now: () => number;
    readonly #stallMs: number;

    constructor(private readonly options: ModelDownloadsOptions) {
        this.#now = options.now ?? Date.now;
        this.#stallMs = options.stallMs ?? DEFAULT_DOWNLOAD_STALL_MS;
        ignoreIpullRejections();
        this.#restore();
    }

    /**
     * Validates `source` (throws DownloadSourceInvalidError) and starts; resolves at once with the
     * record. The same source again answers with the download that runs, or resumes the one that stopped.
     */
    start(source: string): ModelDownload {
        const checked = validateDownloadSource(source);
        const same = [...this.#entries.values()].filter((entry) => entry.source === checked);
        const running = same.find((entry) => entry.state === "downloading");
        if (running !== undefined) {
            return this.#record(running);
        }
        const stopped = same.find((entry) => entry.state === "failed" && entry.resumable);
        if (stopped !== undefined) {
            return this.resume(stopped.id);
        }
        const entry: DownloadEntry = {
            id: crypto.randomUUID(),
            source: checked,
            path: "",
            startedAt: new Date(this.#now()).toISOString(),
            remote: undefined,
            state: "downloading",
            downloadedBytes: 0,
            totalBytes: 0,
            keptBytes: 0,
            resumable: false,
            samples: [],
            lastAdvanceAt: this.#now(),
            error: undefined,
            notice: undefined,
            run: undefined
        };
        this.#entries.set(entry.id, entry);
        this.#begin(entry, false);
        return this.#record(entry);
    }

    /**
     * Continues a failed download from the bytes on disk; resolves at once with the record. When the
     * file on the server changed, or cannot be checked, it starts again from zero and says why in
     * `notice`. Throws download_unknown, or download_not_resumable for one with nothing to resume.
     */
    resume(id: string): ModelDownload {
        const entry = this.#entry(id);
        if (entry.state === "downloading") {
            return this.#record(entry);
        }
        if (entry.state !== "failed" || !entry.resumable) {
            const why =
                entry.state === "done"
                    ? "it finished"
                    : entry.state === "cancelled"
                      ? "it was cancelled and its partial file deleted"
                      : "it kept no partial file";
            throw new DownloadNotResumableError(
                `The download of ${describeName(entry)} cannot be resumed: ${why}. Start it again with Download.`
            );
        }
        entry.state = "downloading";
        entry.error = undefined;
        entry.notice = undefined;
        entry.downloadedBytes = entry.keptBytes;
        this.#begin(entry, true);
        return this.#record(entry);
    }

    list(): readonly ModelDownload[] {
        return [...this.#entries.values()].map((entry) => this.#record(entry));
    }

    get(id: string): ModelDownload | undefined {
        const entry = this.#entries.get(id);
        return entry === undefined ? undefined : this.#record(entry);
    }

    /** Cancels a running download, or discards a resumable one: its partial file is deleted. A finished one is left as it is. */
    async cancel(id: string): Promise<ModelDownload> {
        const entry = this.#entry(id);
        if (entry.state === "downloading" && entry.run !== undefined) {
            entry.state = "cancelled";
            entry.run.stop("cancelled");
            await untilOrAfter(entry.run.done, HALT_WAIT_MS);
        } else if (entry.state === "failed" && entry.resumable) {
            removePartialFiles(entry.path);
            Object.assign(entry, { state: "cancelled", resumable: false, keptBytes: 0 });
        }
        return this.#record(entry);
    }

    /**
     * For the host's shutdown: stops every running download and keeps its partial file and record,
     * so the next start lists it as resumable.
     */
    async dispose(): Promise<void> {
        const runs = [...this.#entries.values()].flatMap((entry) => (entry.run === undefined ? [] : [entry.run]));
        for (const run of runs) {
            run.stop("stopping");
        }
        await Promise.all(runs.map((run) => untilOrAfter(run.done, HALT_WAIT_MS)));
    }

    #entry(id: string): DownloadEntry {
        const entry = this.#entries.get(id);
        if (entry === undefined) {
            throw new DownloadUnknownError(`No download has the id ${JSON.stringify(id.slice(0, 60))}; listDownloads names them.`);
        }
        return entry;
    }

    /** Partial downloads a previous host left (it stopped, or crashed): listed as failed, resumable where a chunk is kept. */
    #restore(): void {
        for (const record of readPartialRecords(this.options.modelsDirectory)) {
            const totalBytes = record.remote?.totalBytes ?? 0;
            const keptBytes = whyNotResumable(record.remote) === undefined ? readKeptBytes(record.path, totalBytes) : 0;
            if (keptBytes === 0) {
                removePartialFiles(record.path);
                continue;
            }
            const entry: DownloadEntry = {
                id: record.id,
                source: record.source,
                path: record.path,
                startedAt: record.startedAt,
                remote: record.remote,
                state: "failed",
                downloadedBytes: keptBytes,
                totalBytes,
                keptBytes,
                resumable: true,
                samples: [],
                lastAdvanceAt: this.#now(),
                error: undefined,
                notice: undefined,
                run: undefined
            };
            entry.error = payload(
                new DownloadInterruptedError(
                    `Kvault stopped while ${describeName(entry)} downloaded; ${keptBytes.toLocaleString("en-US")} of ${bytes(totalBytes)} are kept. Resume continues from there.`
                )
            );
            this.#entries.set(entry.id, entry);
        }
    }

    #begin(entry: DownloadEntry, resuming: boolean): void {
        let resolveStopped!: (reason: StopReason) => void;
        const run: Run = {
            stopReason: undefined,
            stopped: new Promise((resolve) => void (resolveStopped = resolve)),
            stop(reason) {
                if (run.stopReason === undefined) {
                    run.stopReason = reason;
                    resolveStopped(reason);
                }
            },
            downloader: undefined,
            watching: true,
            done: Promise.resolve(),
            spaceCheckedAt: undefined,
            noSpace: undefined,
            finalBefore: undefined
        };
        entry.run = run;
        entry.samples = [];
        entry.lastAdvanceAt = this.#now();
        const watchdog = setInterval(
            () => {
                if (run.watching && run.stopReason === undefined && this.#now() - entry.lastAdvanceAt >= this.#stallMs) {
                    run.stop("stalled");
                }
            },
            Math.max(10, Math.min(1_000, Math.floor(this.#stallMs / 4)))
        );
        run.done = this.#run(entry, run, resuming).finally(() => {
            clearInterval(watchdog);
            if (entry.run === run) {
                entry.run = undefined;
            }
        });
    }

    async #run(entry: DownloadEntry, run: Run, resuming: boolean): Promise<void> {
        try {
            fs.mkdirSync(this.options.modelsDirectory, { recursive: true, mode: 0o700 });
            // Asked before node-llama-cpp's downloader sees the URL: as it is created, it plans one entry per 5 MiB
            // of the size the server claims, so a claim of 2^50 bytes would end the process (2^28 entries). A server
            // that claims one size here and another to the downloader can still get that far: its GET is ipull's own.
            const direct = isHttpUrl(entry.source) ? await probeRemoteFile(entry.source, this.#stallMs).catch(() => undefined) : undefined;
            if (run.stopReason !== undefined) {
                return await this.#halt(entry, run);
            }
            const refused = direct === undefined || direct.totalBytes === 0 ? undefined : this.#checkSpace(entry, run, direct.totalBytes);
            if (refused !== undefined) {
                throw refused;
            }
            let downloader = await this.#create(entry, run);
            const filePath = downloader.entrypointFilePath;
            if (!downloader.filesInfo.every((file) => isDirectlyInside(this.options.modelsDirectory, file.filePath))) {
                // Only an hf: reference can get here (Kvault names URL downloads itself); nothing was written yet.
                await downloader.cancel({ deleteTempFile: false }).catch(() => undefined);
                throw new DownloadFailedError(
                    `${entry.source.slice(0, 200)} resolves to the file name ${JSON.stringify(downloader.entrypointFilename ?? "")}, which is not a file name in ${this.options.modelsDirectory}; download it by its URL instead.`
                );
            }
            const other = [...this.#entries.values()].find((candidate) => candidate !== entry && candidate.path === filePath);
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
                  : await probeRemoteFile(url, this.#stallMs).catch(() => undefined);
            if (run.stopReason !== undefined) {
                return await this.#halt(entry, run);
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
                    downloader = await this.#create(entry, run);
                    if (run.stopReason !== undefined) {
                        return await this.#halt(entry, run);
                    }
                }
                if (restartReason !== undefined) {
                    entry.notice = `Started again from zero: ${restartReason}.`;
                }
                entry.remote = remote;
                entry.startedAt = new Date(this.#now()).toISOString();
            }
            writePartialRecord({ id: entry.id, source: entry.source, path: filePath, remote: entry.remote, startedAt: entry.startedAt });
            entry.totalBytes = downloader.totalSize;
            entry.keptBytes = downloader.downloadedSize;
            entry.downloadedBytes = downloader.downloadedSize;
            entry.resumable = false;
            entry.lastAdvanceAt = this.#now();
            const noSpace = this.#checkSpace(entry, run);
            if (noSpace !== undefined) {
                throw noSpace;
            }
            for (const file of downloader.filesInfo) {
                preparePartialFile(file.filePath);
            }
            run.finalBefore = fileIdentity(filePath);
            const finished = await Promise.race([downloader.download().then(() => true), run.stopped.then(() => false)]);
            if (!finished || run.stopReason !== undefined) {
                return await this.#halt(entry, run);
            }
            run.watching = false;
            this.#progress(entry, downloader.totalSize, downloader.downloadedSize);
            await this.#checkUnchanged(entry);
            // Nothing is listed as done that the engine could not load; read in a child, as any file from the network is untrusted.
            const facts = await (this.options.inspect ?? ((modelPath) => inspectModelInChild(modelPath, inspectDefaults)))(entry.path);
            removePartialRecord(entry.path);
            try {
                await this.options.onDone?.({ ...this.#record(entry), state: "done" }, facts);
            } catch {
                // The library is a convenience; the download itself succeeded.
            }
            Object.assign(entry, { state: "done", keptBytes: 0, resumable: false });
        } catch (error) {
            if (run.stopReason !== undefined) {
                return await this.#halt(entry, run);
            }
            await this.#fail(entry, run, error);
        }
    }

    /** A new downloader for the entry; rejects when the run is stopped first (ipull retries an unreachable server's first request for minutes). */
    async #create(entry: DownloadEntry, run: Run): Promise<ModelDownloader> {
        const creating = createModelDownloader({
            modelUri: entry.source,
            dirPath: this.options.modelsDirectory,
            // Never the URL's own last segment or the server's Content-Disposition as is; an hf: reference names its file itself.
            fileName: isHttpUrl(entry.source) ? downloadFileName(entry.source) : undefined,
            showCliProgress: false,
            skipExisting: false,
            // Kept on cancel: this file decides what to delete (a stalled download keeps its chunks).
            deleteTempFileOnCancel: false,
            // Only this run's: a stopped downloader's late report must not move a resumed run's counts.
            onProgress: ({ totalSize, downloadedSize }) => {
                if (entry.run === run) {
                    this.#progress(entry, totalSize, downloadedSize);
                }
            }
        });
        const downloader = await Promise.race([creating, run.stopped.then(() => undefined)]);
        if (downloader === undefined) {
            // It may still arrive: closed then, its partial file left to whoever stopped the run.
            void creating.then(
                (late) => late.cancel({ deleteTempFile: false }),
                () => undefined
            );
            throw new Error(`The download of ${describeName(entry)} was stopped before it started.`);
        }
        run.downloader = downloader;
        return downloader;
    }

    /** The server's file must be the one the bytes on disk came from; otherwise they may mix two versions. */
    async #checkUnchanged(entry: DownloadEntry): Promise<void> {
        if (entry.remote === undefined || whyNotResumable(entry.remote) !== undefined) {
            return;
        }
        const after = await probeRemoteFile(entry.remote.url, this.#stallMs).catch(() => undefined);
        const change = after === undefined ? undefined : describeRemoteChange(entry.remote, after);
        if (change !== undefined) {
            throw new DownloadChangedError(
                `The file on the server changed while ${describeName(entry)} downloaded (${change}), so what arrived may mix two versions; it was deleted. Download it again.`
            );
        }
    }

    /** After a stop from outside: keep what a resume can use (a stall, the host stopping), delete the rest. */
    async #halt(entry: DownloadEntry, run: Run): Promise<void> {
        const reason = run.stopReason!;
        await run.downloader?.cancel({ deleteTempFile: reason === "cancelled" || reason === "restarted" }).catch(() => undefined);
        await delay(PROGRESS_WRITE_SETTLE_MS);
        if (reason === "noSpace") {
            this.#keepOrDelete(entry, run.noSpace!.message, "download_no_space");
            return;
        }
        if (reason === "cancelled") {
            removePartialFiles(entry.path);
            Object.assign(entry, { state: "cancelled", resumable: false, keptBytes: 0 });
            return;
        }
        const received =
            entry.totalBytes > 0
                ? `${entry.downloadedBytes.toLocaleString("en-US")} of ${bytes(entry.totalBytes)}`
                : bytes(entry.downloadedBytes);
        if (reason === "restarted") {
            removePartialFiles(entry.path);
            Object.assign(entry, { state: "failed", resumable: false, keptBytes: 0 });
            entry.error = payload(
                new DownloadInterruptedError(
                    `The connection to ${describeHost(entry)} dropped after ${received}, and the server does not accept range requests, so the download cannot ` +
                        "continue where it stopped (node-llama-cpp's downloader would write the bytes it fetches again at the wrong place). The partial file was deleted; download it again."
                )
            );
            return;
        }
        const what =
            reason === "stalled"
                ? `The download of ${describeName(entry)} stopped: no data arrived for ${seconds(this.#stallMs)} after ${received}, and node-llama-cpp's retries got no further.`
                : `Kvault stopped while ${describeName(entry)} downloaded (${received}).`;
        this.#keepOrDelete(entry, what);
    }

    async #fail(entry: DownloadEntry, run: Run, error: unknown): Promise<void> {
        await run.downloader?.cancel({ deleteTempFile: false }).catch(() => undefined);
        await delay(PROGRESS_WRITE_SETTLE_MS);
        if (error instanceof DownloadNoSpaceError) {
            this.#keepOrDelete(entry, error.message, "download_no_space"); // a resume whose rest does not fit keeps what it has
            return;
        }
        if (error instanceof KvaultError && !(error instanceof DownloadFailedError)) {
            // Not a usable model, or a file that changed on the server: nothing of it is worth keeping.
            removePartialFiles(entry.path);
            if (entry.path !== "") {
                fs.rmSync(entry.path, { force: true });
            }
            Object.assign(entry, { state: "failed", resumable: false, keptBytes: 0 });
            entry.error =
                error instanceof DownloadChangedError
                    ? payload(error)
                    : { code: error.code, message: `The download is not a usable model, so it was deleted: ${error.message}` };
            return;
        }
        const detail = error instanceof Error ? error.message : String(error);
        this.#keepOrDelete(entry, `Downloading ${entry.source.slice(0, 200)} failed: ${detail}`, "download_failed");
    }

    /** Failed: resumable with the complete chunks on disk when there are any and the file can be checked at resume; else deleted. */
    #keepOrDelete(
        entry: DownloadEntry,
        what: string,
        code: "download_failed" | "download_interrupted" | "download_no_space" = "download_interrupted"
    ): void {
        const why = whyNotResumable(entry.remote);
        const keptBytes = why === undefined ? readKeptBytes(entry.path, entry.totalBytes) : 0;
        entry.state = "failed";
        entry.keptBytes = keptBytes;
        entry.resumable = keptBytes > 0;
        let next: string;
        if (keptBytes > 0) {
            next = `${bytes(keptBytes)} are kept; Resume continues from there.`;
        } else {
            removePartialFiles(entry.path);
            this.#removeStrayFinal(entry);
            next =
                entry.downloadedBytes === 0
                    ? ""
                    : `Nothing could be kept (${why ?? "no whole 5 MiB chunk had arrived, and node-llama-cpp's downloader keeps whole chunks"}); download it again.`;
        }
        const message = next === "" ? what : `${what} ${next}`;
        entry.error = payload(
            code === "download_failed"
                ? new DownloadFailedError(message)
                : code === "download_no_space"
                  ? new DownloadNoSpaceError(message)
                  : new DownloadInterruptedError(message)
        );
    }

    /**
     * Whether the rest of the download fits the disk, with what Kvault keeps free: before the first
     * byte from the size the server gave, then as the bytes arrive (a server that sends more than it
     * said, or gave no size). Starts the running check.
     */
    #checkSpace(entry: DownloadEntry, run: Run, totalBytes = entry.totalBytes): DownloadNoSpaceError | undefined {
        run.spaceCheckedAt = entry.downloadedBytes;
        return checkDownloadSpace({
            directory: this.options.modelsDirectory,
            name: entry.path === "" && isHttpUrl(entry.source) ? downloadFileName(entry.source) : describeName(entry),
            remainingBytes: totalBytes > 0 ? Math.max(0, totalBytes - entry.downloadedBytes) : undefined,
            receivedBytes: entry.downloadedBytes,
            freeBytes: freeDiskBytes(this.options.modelsDirectory),
            keepFreeBytes: this.options.keepFreeBytes ?? DEFAULT_KEEP_FREE_BYTES
        });
    }

    /** Deletes what a stopped run of unknown size left under the final name (see Run.finalBefore). */
    #removeStrayFinal(entry: DownloadEntry): void {
        const before = entry.run?.finalBefore;
        if (before !== undefined && entry.path !== "" && fileIdentity(entry.path) !== before) {
            fs.rmSync(entry.path, { force: true });
        }
    }

    #progress(entry: DownloadEntry, totalSize: number, downloadedSize: number): void {
        if (entry.state !== "downloading" || entry.run?.stopReason !== undefined) {
            return;
        }
        entry.totalBytes = totalSize;
        const now = this.#now();
        if (downloadedSize < entry.downloadedBytes && entry.remote?.acceptsRanges === false) {
            entry.run?.stop("restarted");
            return;
        }
        if (downloadedSize > entry.downloadedBytes) {
            entry.downloadedBytes = downloadedSize;
            entry.lastAdvanceAt = now;
        }
        const run = entry.run;
        if (run?.spaceCheckedAt !== undefined && entry.downloadedBytes - run.spaceCheckedAt >= SPACE_CHECK_EVERY_BYTES) {
            run.noSpace = this.#checkSpace(entry, run);
            if (run.noSpace !== undefined) {
                run.stop("noSpace");
                return;
            }
        }
        entry.samples.push({ at: now, bytes: entry.downloadedBytes });
        while (entry.samples.length > 2 && entry.samples[0]!.at < now - SPEED_WINDOW_MS) {
            entry.samples.shift();
        }
        this.options.onProgress?.(this.#record(entry));
    }

    #record(entry: DownloadEntry): ModelDownload {
        return {
            id: entry.id,
            source: entry.source,
            path: entry.path,
            state: entry.state,
            downloadedBytes: entry.downloadedBytes,
            totalBytes: entry.totalBytes,
            bytesPerSecond: entry.state === "downloading" ? speed(entry.samples, this.#now()) : 0,
            error: entry.state === "failed" ? entry.error : undefined,
            resumable: entry.state === "failed" && entry.resumable,
            keptBytes: entry.state === "failed" && entry.resumable ? entry.keptBytes : 0,
            notice: entry.notice
        };
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

/**
 * Why a partial file cannot be continued against what the server says now (a sentence fragment),
 * or undefined when it can. `before` is what the server said when its bytes started arriving.
 */
function whyRestart(before: RemoteFileFacts | undefined, now: RemoteFileFacts | undefined): string | undefined {
    const unsafe = whyNotResumable(before);
    if (unsafe !== undefined) {
        return unsafe;
    }
    if (now === undefined) {
        return "the server could not be asked whether the file changed since the partial download";
    }
    if (!now.acceptsRanges) {
        return "the server no longer accepts range requests";
    }
    const change = describeRemoteChange(before!, now);
    return change === undefined ? undefined : `the file on the server changed since the partial download (${change})`;
}

/**
 * The http(s) URL the source resolves to: the source itself, or for an `hf:` reference the URL
 * node-llama-cpp resolved (its ModelDownloader's `_modelUrl`, internal in 3.21.1 and so checked
 * here). Undefined when not known: such a download is not resumable.
 */
function resolvedUrl(downloader: ModelDownloader, source: string): string | undefined {
    if (isHttpUrl(source)) {
        return source;
    }
    const internal = (downloader as unknown as { _modelUrl?: unknown })._modelUrl;
    return typeof internal === "string" && /^https?:\/\//i.test(internal) ? internal : undefined;
}

const NO_FILE = "none";

/** A file's identity (device, inode, size, mtime), or NO_FILE: tells a file replaced since from the same one. */
function fileIdentity(filePath: string): string {
    try {
        const stats = fs.statSync(filePath);
        return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
    } catch {
        return NO_FILE;
    }
}

function describeName(entry: DownloadEntry): string {
    return entry.path === "" ? entry.source.slice(0, 200) : entry.path.split(/[\\/]/).pop()!;
}

function describeHost(entry: DownloadEntry): string {
    try {
        return new URL(entry.remote?.url ?? entry.source).host;
    } catch {
        return "the server";
    }
}

function bytes(count: number): string {
    return `${count.toLocaleString("en-US")} ${count === 1 ? "byte" : "bytes"}`;
}

function seconds(ms: number): string {
    return `${(ms / 1000).toLocaleString("en-US", { maximumFractionDigits: 1 })} s`;
}

function payload(error: KvaultError): { code: string; message: string } {
    return { code: error.code, message: error.message };
}

function delay(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `promise`, or nothing after `ms`: a run stuck on a hung connection must not hold up cancel or shutdown. */
async function untilOrAfter(promise: Promise<void>, ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([promise, new Promise<void>((resolve) => void (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
}
