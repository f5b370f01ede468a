// Model downloads for the model manager (contract/rpc.ts startDownload, resumeDownload): Kvault's
// own streaming downloader (fetchModelFile) into the host's models directory, a small table of
// what runs and ran, resuming a download that stopped part-way, and a check that what arrived is a
// usable GGUF before anyone can load it.
//
// Why Kvault downloads by itself rather than with node-llama-cpp's downloader (ipull 3.9):
// - ipull plans one entry per 5 MiB of the size the server claims, as it is created, from a GET
//   of its own: a server that answered Kvault's HEAD with 1,000 bytes and that GET with 2^51 ended
//   the host. fetchModelFile reads every size from the response whose bytes it writes, checks it
//   against the HEAD and the free disk before the first byte, and allocates by bytes received.
// - ipull was also created to resolve an `hf:` reference, so that step believed a claimed size
//   too; resolveHuggingFaceReference builds Hugging Face's URL itself.
// - ipull wrote a retried body from a server without Range support at the wrong offset, named
//   files after the server's Content-Disposition, created them 0644, and left rejections no one
//   handled. Kvault names every URL download itself (downloadFileName), creates the partial file
//   0600 (preparePartialFile), and fails a cut body from such a server.
// What stays: the partial file `<file>.ipull` in ipull's layout with 5 MiB chunks (partialDownloads.ts),
// so an older Kvault's partial downloads resume; a dropped connection retried from the cut chunk
// until no byte arrives for `stallMs`; and the server asked (probeRemoteFile) when a download
// starts, resumes and ends, as no byte stream carries an ETag; and split models: every part of
// `model-00001-of-00003.gguf` side by side, binary parts `model.gguf.part1of3` joined into one
// file (downloadLayout.ts), one part after another, each checked as a file of its own.
//
// This file keeps the table and its calls; one run of one download is DownloadRun.ts, how a run
// that did not finish ends is haltDownload.ts, a table row and its record are DownloadEntry.ts.
import crypto from "node:crypto";
import type { ModelDownload, ModelFacts } from "../../contract/models.js";
import { DEFAULT_HUGGING_FACE_URL, HUGGING_FACE_URL_VARIABLE, HuggingFaceClient } from "./catalogue/HuggingFaceClient.js";
import { DEFAULT_KEEP_FREE_BYTES } from "./checkDownloadSpace.js";
import { downloadRecord, type DownloadEntry } from "./DownloadEntry.js";
import { DownloadRun, type DownloadRunContext } from "./DownloadRun.js";
import { bytes, describeName, payload } from "./describeDownload.js";
import { ignoreIpullRejections } from "./ignoreIpullRejections.js";
import { inspectDefaults } from "./inspectModelFile.js";
import { inspectModelInChild } from "./inspectModelInChild.js";
import { DownloadInterruptedError, DownloadNotResumableError, DownloadUnknownError } from "./modelErrors.js";
import { readPartialRecords, readPartsKeptBytes, removePartialFiles } from "./partialDownloads.js";
import { validateDownloadSource } from "./validateDownloadSource.js";
import { whyPartsNotResumable } from "./whyRestart.js";

/** Without a new byte for this long a download is stopped and kept to resume; its retries back off to 5 s. */
export const DEFAULT_DOWNLOAD_STALL_MS = 60_000;
/** How long cancel and dispose wait for a run to let go of its files (a hung connection must not hang them). */
const HALT_WAIT_MS = 5_000;

export { validateDownloadSource } from "./validateDownloadSource.js";
export { speed } from "./DownloadEntry.js";

export interface ModelDownloadsOptions {
    /** Where files go; created on the first download. Partial downloads found there at start are listed, resumable. */
    readonly modelsDirectory: string;
    /** For tests: the clock speed and stalls are measured by. */
    readonly now?: () => number;
    /** Called with the record as the bytes arrive (at most once per DownloadRun's PROGRESS_REPORT_MS, and once they are all there). */
    readonly onProgress?: (download: ModelDownload) => void;
    /** A download that gains no new byte for this long is stopped, its partial file kept (ms); default DEFAULT_DOWNLOAD_STALL_MS. */
    readonly stallMs?: number;
    /** Called once a download arrived and is a usable GGUF, before it is listed as done (the model library); its failure is ignored. */
    readonly onDone?: (download: ModelDownload, facts: ModelFacts) => Promise<void> | void;
    /** Reads a finished file's facts, or refuses it (model_unreadable, …); by default in a child process (inspectModelInChild). */
    readonly inspect?: (modelPath: string) => Promise<ModelFacts>;
    /** Bytes every download leaves free on the models directory's disk; default DEFAULT_KEEP_FREE_BYTES. */
    readonly keepFreeBytes?: number;
    /** Where `hf:` references resolve; default the catalogue's (KVAULT_HUGGINGFACE_URL, else huggingface.co). */
    readonly huggingFaceUrl?: string;
}

/** The host's downloads: start, resume, list, cancel. Finished entries stay listed until the host stops. */
export class ModelDownloads {
    readonly #entries = new Map<string, DownloadEntry>();
    readonly #now: () => number;
    readonly #context: DownloadRunContext;

    constructor(private readonly options: ModelDownloadsOptions) {
        this.#now = options.now ?? Date.now;
        this.#context = {
            modelsDirectory: options.modelsDirectory,
            now: this.#now,
            stallMs: options.stallMs ?? DEFAULT_DOWNLOAD_STALL_MS,
            keepFreeBytes: options.keepFreeBytes ?? DEFAULT_KEEP_FREE_BYTES,
            huggingFace: new HuggingFaceClient(
                options.huggingFaceUrl ?? process.env[HUGGING_FACE_URL_VARIABLE] ?? DEFAULT_HUGGING_FACE_URL
            ),
            inspect: options.inspect ?? ((modelPath) => inspectModelInChild(modelPath, inspectDefaults)),
            onProgress: options.onProgress,
            onDone: options.onDone,
            entries: () => this.#entries.values()
        };
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
            parts: [],
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
            removePartialFiles(entry.path, entry.parts);
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
            const totalBytes = record.parts.reduce((sum, part) => sum + (part.remote?.totalBytes ?? 0), 0);
            const keptBytes = whyPartsNotResumable(record.parts) === undefined ? readPartsKeptBytes(record.parts) : 0;
            if (keptBytes === 0) {
                removePartialFiles(record.path, record.parts);
                continue;
            }
            const entry: DownloadEntry = {
                id: record.id,
                source: record.source,
                path: record.path,
                startedAt: record.startedAt,
                parts: record.parts,
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
        DownloadRun.begin(this.#context, entry, resuming);
    }

    #record(entry: DownloadEntry): ModelDownload {
        return downloadRecord(entry, this.#now());
    }
}

/** `promise`, or nothing after `ms`: a run stuck on a hung connection must not hold up cancel or shutdown. */
async function untilOrAfter(promise: Promise<void>, ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([promise, new Promise<void>((resolve) => void (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
}
