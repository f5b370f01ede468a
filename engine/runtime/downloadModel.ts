// Model downloads for the model manager (contract/rpc.ts startDownload): node-llama-cpp's
// createModelDownloader into the host's models directory, a small table of what runs and ran,
// and a check that what arrived is a usable GGUF before anyone can load it.
import crypto from "node:crypto";
import fs from "node:fs";
import { createModelDownloader, type ModelDownloader } from "node-llama-cpp";
import { MAX_DOWNLOAD_SOURCE_CHARS, type ModelDownload } from "../../contract/models.js";
import { KvaultError } from "../core/KvaultError.js";
import { DownloadFailedError, DownloadSourceInvalidError, DownloadUnknownError } from "../core/modelErrors.js";
import { inspectModelFile } from "./inspectModelFile.js";

/** Speed is averaged over this window. */
const SPEED_WINDOW_MS = 3_000;

/** Refuses anything but an http(s) URL or an `hf:` reference, of at most 4,096 characters. */
export function validateDownloadSource(source: unknown): string {
    if (typeof source !== "string" || source.trim() === "")
        throw new DownloadSourceInvalidError("Give a model URL (http:// or https://) or a Hugging Face reference (hf:owner/repo:quant).");
    const text = source.trim();
    if (text.length > MAX_DOWNLOAD_SOURCE_CHARS)
        throw new DownloadSourceInvalidError(`The download source has ${text.length.toLocaleString("en-US")} characters; the limit is ${MAX_DOWNLOAD_SOURCE_CHARS.toLocaleString("en-US")}.`);
    if (/^hf:[^\s]+$/i.test(text))
        return text;
    let url: URL;
    try {
        url = new URL(text);
    } catch {
        throw new DownloadSourceInvalidError(`${JSON.stringify(text.slice(0, 60))} is not a URL; give an http(s) URL or an hf: reference.`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
        throw new DownloadSourceInvalidError(`Downloads use http://, https:// or hf:, not ${url.protocol}//.`);
    return url.href;
}

interface DownloadEntry {
    id: string;
    source: string;
    path: string;
    state: ModelDownload["state"];
    downloadedBytes: number;
    totalBytes: number;
    samples: { at: number; bytes: number }[];
    error: ModelDownload["error"];
    controller: AbortController;
    downloader: ModelDownloader | undefined;
}

export interface ModelDownloadsOptions {
    /** Where files go; created on the first download. */
    readonly modelsDirectory: string;
    /** For tests: the clock speed is measured by. */
    readonly now?: () => number;
    /** Called with the record after each progress report of node-llama-cpp's downloader. */
    readonly onProgress?: (download: ModelDownload) => void;
}

/** The host's downloads: start, list, cancel. Finished entries stay listed until the host stops. */
export class ModelDownloads {
    readonly #entries = new Map<string, DownloadEntry>();
    readonly #now: () => number;

    constructor(private readonly options: ModelDownloadsOptions) {
        this.#now = options.now ?? Date.now;
    }

    /** Validates `source` (throws DownloadSourceInvalidError) and starts; resolves at once with the record. */
    start(source: string): ModelDownload {
        const checked = validateDownloadSource(source);
        const entry: DownloadEntry = {
            id: crypto.randomUUID(), source: checked, path: "", state: "downloading", downloadedBytes: 0, totalBytes: 0,
            samples: [], error: undefined, controller: new AbortController(), downloader: undefined
        };
        this.#entries.set(entry.id, entry);
        void this.#run(entry);
        return this.#record(entry);
    }

    list(): readonly ModelDownload[] {
        return [...this.#entries.values()].map((entry) => this.#record(entry));
    }

    get(id: string): ModelDownload | undefined {
        const entry = this.#entries.get(id);
        return entry === undefined ? undefined : this.#record(entry);
    }

    /** Cancels a running download (its partial file is deleted); a finished one is left as it is. */
    async cancel(id: string): Promise<ModelDownload> {
        const entry = this.#entries.get(id);
        if (entry === undefined)
            throw new DownloadUnknownError(`No download has the id ${JSON.stringify(id.slice(0, 60))}; listDownloads names them.`);
        if (entry.state === "downloading") {
            entry.state = "cancelled";
            entry.controller.abort();
            await entry.downloader?.cancel({ deleteTempFile: true }).catch(() => undefined);
            removePartial(entry);
        }
        return this.#record(entry);
    }

    /** Cancels every running download; for the host's shutdown. */
    async dispose(): Promise<void> {
        await Promise.all([...this.#entries.values()].filter((entry) => entry.state === "downloading").map((entry) => this.cancel(entry.id)));
    }

    async #run(entry: DownloadEntry): Promise<void> {
        try {
            fs.mkdirSync(this.options.modelsDirectory, { recursive: true });
            const downloader = await createModelDownloader({
                modelUri: entry.source,
                dirPath: this.options.modelsDirectory,
                showCliProgress: false,
                skipExisting: false,
                deleteTempFileOnCancel: true,
                onProgress: ({ totalSize, downloadedSize }) => this.#progress(entry, totalSize, downloadedSize)
            });
            entry.downloader = downloader;
            entry.path = downloader.entrypointFilePath;
            if (entry.state !== "downloading") {
                await downloader.cancel({ deleteTempFile: true }).catch(() => undefined);
                removePartial(entry);
                return;
            }
            entry.totalBytes = downloader.totalSize;
            await downloader.download({ signal: entry.controller.signal });
            if (entry.state !== "downloading") {
                removePartial(entry);
                return;
            }
            this.#progress(entry, downloader.totalSize, downloader.downloadedSize);
            // Nothing is listed as done that the engine could not load.
            await inspectModelFile(entry.path);
            entry.state = "done";
        } catch (error) {
            if (entry.state !== "downloading") {
                removePartial(entry);
                return;
            }
            entry.state = "failed";
            entry.error = describeFailure(error, entry.source);
            removePartial(entry);
        }
    }

    #progress(entry: DownloadEntry, totalSize: number, downloadedSize: number): void {
        entry.totalBytes = totalSize;
        entry.downloadedBytes = downloadedSize;
        const now = this.#now();
        entry.samples.push({ at: now, bytes: downloadedSize });
        while (entry.samples.length > 2 && entry.samples[0]!.at < now - SPEED_WINDOW_MS)
            entry.samples.shift();
        this.options.onProgress?.(this.#record(entry));
    }

    #record(entry: DownloadEntry): ModelDownload {
        return {
            id: entry.id, source: entry.source, path: entry.path, state: entry.state,
            downloadedBytes: entry.downloadedBytes, totalBytes: entry.totalBytes,
            bytesPerSecond: entry.state === "downloading" ? speed(entry.samples, this.#now()) : 0,
            error: entry.error
        };
    }
}

/** Bytes per second between the oldest sample in the window and now. */
export function speed(samples: readonly { at: number; bytes: number }[], now: number): number {
    const recent = samples.filter((sample) => sample.at >= now - SPEED_WINDOW_MS);
    if (recent.length < 2)
        return 0;
    const first = recent[0]!;
    const last = recent[recent.length - 1]!;
    const seconds = Math.max((now - first.at) / 1000, 0.001);
    return Math.max(0, (last.bytes - first.bytes) / seconds);
}

function removePartial(entry: DownloadEntry): void {
    if (entry.path === "")
        return;
    for (const file of [entry.path, `${entry.path}.ipull`])
        fs.rmSync(file, { force: true });
}

function describeFailure(error: unknown, source: string): { code: string; message: string } {
    if (error instanceof KvaultError)
        return { code: error.code, message: `The download is not a usable model, so it was deleted: ${error.message}` };
    const detail = error instanceof Error ? error.message : String(error);
    const failure = new DownloadFailedError(`Downloading ${source.slice(0, 200)} failed: ${detail}`);
    return { code: failure.code, message: failure.message };
}
