// One run of one download: from asking the server, through fetchModelFile writing the bytes (its
// progress, a stall, the disk filling), to the check that what arrived is the file the server had
// and a usable GGUF. downloadModel.ts says what shapes this.
import fs from "node:fs";
import path from "node:path";
import type { ModelDownload, ModelFacts } from "../../contract/models.js";
import type { HuggingFaceClient } from "./catalogue/HuggingFaceClient.js";
import { checkDownloadSpace, freeDiskBytes, type DownloadNoSpaceError } from "./checkDownloadSpace.js";
import { addSpeedSample, downloadRecord, type DownloadEntry } from "./DownloadEntry.js";
import { describeName, payload } from "./describeDownload.js";
import { downloadFileName } from "./downloadFileName.js";
import { fetchModelFile } from "./fetchModelFile.js";
import { finishDownloadParts } from "./finishDownloadParts.js";
import { failDownload, haltDownload } from "./haltDownload.js";
import { DownloadChangedError, DownloadFailedError } from "./modelErrors.js";
import {
    partialPath,
    preparePartialFile,
    readKeptBytes,
    removePartialFiles,
    removePartialRecord,
    writePartialRecord,
    type PartialPart
} from "./partialDownloads.js";
import { describeRemoteChange, probeRemoteFile } from "./probeRemoteFile.js";
import { resolveDownloadSource } from "./resolveDownloadSource.js";
import { isHttpUrl } from "./validateDownloadSource.js";
import { whyPartsNotResumable, whyPartsRestart } from "./whyRestart.js";

/** Progress reports go out at most this often (ms); the disk check and the stall clock see every write. */
const PROGRESS_REPORT_MS = 100;
/** A server that gave no answer to a probe (a timeout, a refused connection), as opposed to an HTTP error. */
const UNREACHABLE = "unreachable";
/** While bytes arrive, the free disk is checked again after each this many (statfs costs microseconds). */
const SPACE_CHECK_EVERY_BYTES = 1024 * 1024;

/**
 * Why a run was stopped: the user, no progress, the host stopping, a server without Range support
 * dropping the connection (the rest cannot be asked for), or the disk filling up.
 */
export type StopReason = "cancelled" | "stalled" | "stopping" | "dropped" | "noSpace";

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
    /** Where `hf:` references resolve. */
    readonly huggingFace: HuggingFaceClient;
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
    /** Aborted on the first stop: ends fetchModelFile's request and its retries. */
    readonly #abort = new AbortController();
    /** When a progress report last went out (ms); undefined before the first. */
    #reportedAt: number | undefined = undefined;
    /** Whether a stall stops it: from the start until the bytes are all there (checking and inspecting are not stalls). */
    #watching = true;
    /** Settles when the run let go of its files (never rejects). */
    readonly done: Promise<void>;
    /** Bytes received when the free disk was last checked; undefined until the first byte is to be written. */
    #spaceCheckedAt: number | undefined = undefined;
    #noSpace: DownloadNoSpaceError | undefined = undefined;
    /** Bytes joining binary parts needs on top of the parts themselves (0 for any other download). */
    #joinBytes = 0;

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

    /** Why the disk stopped it, when it did. */
    get noSpace(): DownloadNoSpaceError | undefined {
        return this.#noSpace;
    }

    /** Stops the run; only the first reason counts. */
    stop(reason: StopReason): void {
        if (this.#stopReason === undefined) {
            this.#stopReason = reason;
            this.#abort.abort();
            this.#resolveStopped(reason);
        }
    }

    async #run(resuming: boolean): Promise<void> {
        const context = this.#context;
        const entry = this.#entry;
        try {
            fs.mkdirSync(context.modelsDirectory, { recursive: true, mode: 0o700 });
            const layout = await Promise.race([
                resolveDownloadSource(entry.source, context.modelsDirectory, context.huggingFace),
                this.stopped
            ]);
            if (typeof layout === "string" || this.#stopReason !== undefined) {
                return await haltDownload(entry, this, context.stallMs);
            }
            const filePath = layout.filePath;
            const other = [...context.entries()].find((candidate) => candidate !== entry && candidate.path === filePath);
            if (other?.state === "downloading") {
                // Its files are not ours to touch.
                entry.state = "failed";
                entry.error = payload(
                    new DownloadFailedError(
                        `Another download is writing ${filePath} now; wait for it to finish or cancel it, then download again.`
                    )
                );
                return;
            }
            entry.path = filePath;
            // Every part is asked before a byte of any is written, so the disk check sees them all.
            const now: PartialPart[] = [];
            for (const part of layout.parts) {
                const remote = await probeRemoteFile(part.url, context.stallMs).catch((error: unknown) =>
                    error instanceof DownloadFailedError ? undefined : UNREACHABLE
                );
                if (remote === UNREACHABLE && resuming && entry.parts.length > 0) {
                    // No answer at all is a stall, not a changed file: the bytes on disk stay for the next Resume.
                    this.stop("stalled");
                }
                now.push({ path: part.path, remote: remote === UNREACHABLE ? undefined : remote });
                if (this.#stopReason !== undefined) {
                    return await haltDownload(entry, this, context.stallMs);
                }
            }
            const sizes = now.map((part) => part.remote?.totalBytes ?? 0);
            // Joining binary parts appends each to the first: the disk holds one part twice meanwhile.
            this.#joinBytes = layout.joined ? Math.max(0, ...sizes.slice(1)) : 0;
            // A size refused here costs no request more; every response's own size is checked again as it comes (fetchModelFile).
            const refused = sum(sizes) === 0 ? undefined : this.#checkSpace(sum(sizes));
            if (refused !== undefined) {
                throw refused;
            }
            const hasPartial = now.some((part) => fs.existsSync(partialPath(part.path)));
            const restartReason = !resuming ? undefined : hasPartial ? whyPartsRestart(entry.parts, now) : "the partial file is gone";
            if (!resuming || restartReason !== undefined) {
                if (hasPartial || entry.parts.length > 0) {
                    removePartialFiles(filePath, [...entry.parts, ...now]);
                    if (hasPartial && other !== undefined && other.resumable) {
                        Object.assign(other, {
                            state: "cancelled",
                            resumable: false,
                            keptBytes: 0,
                            notice: `A download of ${entry.source.slice(0, 200)} into the same file replaced it.`
                        });
                    }
                }
                if (restartReason !== undefined) {
                    entry.notice = `Started again from zero: ${restartReason}.`;
                }
                entry.parts = now;
                entry.startedAt = new Date(context.now()).toISOString();
            }
            writePartialRecord({ id: entry.id, source: entry.source, path: filePath, parts: entry.parts, startedAt: entry.startedAt });
            // What the server said when the bytes on disk started arriving: every response must agree with it.
            const expected = entry.parts.map((part) => part.remote?.totalBytes ?? 0);
            const kept = entry.parts.map((part, index) =>
                resuming && restartReason === undefined ? readKeptBytes(part.path, expected[index]!) : 0
            );
            /** Each part's size as its latest response announced it (0: not known yet). */
            const partBytes = [...expected];
            entry.totalBytes = expected.includes(0) ? 0 : sum(expected);
            entry.keptBytes = sum(kept);
            entry.downloadedBytes = sum(kept);
            entry.resumable = false;
            entry.lastAdvanceAt = context.now();
            const noSpace = this.#checkSpace(sum(expected), sum(kept));
            if (noSpace !== undefined) {
                throw noSpace;
            }
            for (const [index, part] of layout.parts.entries()) {
                const before = sum(partBytes.slice(0, index));
                const total = (): number => (partBytes.includes(0) ? 0 : sum(partBytes));
                preparePartialFile(part.path);
                const fetched = await fetchModelFile({
                    url: part.url,
                    filePath: part.path,
                    name: path.basename(part.path),
                    expectedBytes: expected[index]!,
                    keptBytes: kept[index]!,
                    signal: this.#abort.signal,
                    // The disk check on the size the very answer announced, with the parts still to come, before it writes a byte.
                    admit: (totalBytes, fromByte) => {
                        partBytes[index] = totalBytes;
                        return this.#checkSpace(sum(partBytes), before + fromByte);
                    },
                    onBytes: (totalBytes, receivedBytes) => {
                        partBytes[index] = totalBytes;
                        this.#progress(total(), before + receivedBytes, false);
                    }
                });
                if (fetched.kind === "dropped") {
                    this.stop("dropped");
                }
                if (fetched.kind !== "done" || this.#stopReason !== undefined) {
                    return await haltDownload(entry, this, context.stallMs);
                }
                partBytes[index] = fetched.totalBytes;
            }
            this.#watching = false;
            this.#progress(sum(partBytes), sum(partBytes), true);
            await finishDownloadParts(filePath, layout.parts, partBytes, layout.joined);
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
            await failDownload(entry, error);
        }
    }

    /** The server's files must be the ones the bytes on disk came from; otherwise they may mix two versions. */
    async #checkUnchanged(): Promise<void> {
        const entry = this.#entry;
        if (whyPartsNotResumable(entry.parts) !== undefined) {
            return;
        }
        for (const part of entry.parts) {
            const after = await probeRemoteFile(part.remote!.url, this.#context.stallMs).catch(() => undefined);
            const change = after === undefined ? undefined : describeRemoteChange(part.remote!, after);
            if (change !== undefined) {
                const what = entry.parts.length === 1 ? "" : ` (part ${path.basename(part.path)})`;
                throw new DownloadChangedError(
                    `The file on the server changed while ${describeName(entry)}${what} downloaded (${change}), so what arrived may mix two versions; it was deleted. Download it again.`
                );
            }
        }
    }

    /**
     * Whether the rest of the download fits the disk, with what Kvault keeps free: before the first
     * byte from the size the server gave, then as the bytes arrive (a server that sends more than it
     * said, or gave no size). Starts the running check.
     */
    #checkSpace(totalBytes = this.#entry.totalBytes, fromByte = this.#entry.downloadedBytes): DownloadNoSpaceError | undefined {
        const entry = this.#entry;
        this.#spaceCheckedAt = fromByte;
        return checkDownloadSpace({
            directory: this.#context.modelsDirectory,
            name: entry.path === "" && isHttpUrl(entry.source) ? downloadFileName(entry.source) : describeName(entry),
            remainingBytes: totalBytes > 0 ? Math.max(0, totalBytes - fromByte) + this.#joinBytes : undefined,
            receivedBytes: fromByte,
            freeBytes: freeDiskBytes(this.#context.modelsDirectory),
            keepFreeBytes: this.#context.keepFreeBytes
        });
    }

    /** After each write, and `force`d once the bytes are all there: the stall clock, the running disk check, then at most one report per PROGRESS_REPORT_MS. */
    #progress(totalBytes: number, receivedBytes: number, force: boolean): void {
        const entry = this.#entry;
        if (entry.state !== "downloading" || this.#stopReason !== undefined) {
            return;
        }
        entry.totalBytes = totalBytes;
        const now = this.#context.now();
        // A chunk cut short is fetched again whole: the record's count never falls back.
        if (receivedBytes > entry.downloadedBytes) {
            entry.downloadedBytes = receivedBytes;
            entry.lastAdvanceAt = now;
        }
        if (this.#spaceCheckedAt !== undefined && receivedBytes - this.#spaceCheckedAt >= SPACE_CHECK_EVERY_BYTES) {
            this.#noSpace = this.#checkSpace(totalBytes, receivedBytes);
            if (this.#noSpace !== undefined) {
                this.stop("noSpace");
                return;
            }
        }
        if (!force && this.#reportedAt !== undefined && now - this.#reportedAt < PROGRESS_REPORT_MS) {
            return;
        }
        this.#reportedAt = now;
        addSpeedSample(entry, now);
        this.#context.onProgress?.(downloadRecord(entry, now));
    }
}

function sum(values: readonly number[]): number {
    return values.reduce((total, value) => total + value, 0);
}
