// Kvault's downloader: one streaming GET at a time into `<file>.ipull` (partialDownloads.ts), a
// dropped connection retried with a Range request from the complete chunks at its start. Every
// size it acts on (the disk check, the progress total, where a body must end) is read from the
// very response whose bytes it writes, and checked against what the server said when asked (HEAD)
// before a byte is written; nothing is allocated in proportion to a size a server claims (the
// downloader it replaces planned one entry per 5 MiB of the claim, and a claim of 2^51 bytes ended
// the host).
import fs from "node:fs";
import { KvaultError } from "../../engine/index.js";
import { bytes } from "./describeDownload.js";
import { DownloadFailedError, DownloadSizeMismatchError } from "./modelErrors.js";
import { PARTIAL_CHUNK_BYTES, partialPath, partialProgress } from "./partialDownloads.js";

/** The first retry of a dropped connection waits this long, each next one twice as long (ms). */
const RETRY_FIRST_DELAY_MS = 100;
/** Retries back off to this (ms); they go on until the run is stopped (a stall, cancel, the host stopping). */
const RETRY_MAX_DELAY_MS = 5_000;

export interface FetchModelFileOptions {
    /** The http(s) URL; redirects are followed. */
    readonly url: string;
    /** The final file; the bytes go to its partial file (created 0600 by the caller), which stays so (finishDownloadParts renames it). */
    readonly filePath: string;
    /** The file's name, for messages. */
    readonly name: string;
    /** The size the server gave when asked (probeRemoteFile), which every response must agree with; 0 when it gave none. */
    readonly expectedBytes: number;
    /** Bytes at the start of the partial file kept from an earlier run: whole chunks, of a file of `expectedBytes`. */
    readonly keptBytes: number;
    readonly signal: AbortSignal;
    /**
     * Called before the first byte of each response is written, with the file's size that response
     * announced (0: none) and the byte it starts at; an error returned refuses it (the disk check).
     */
    readonly admit: (totalBytes: number, fromByte: number) => KvaultError | undefined;
    /** Called after each write: the file's size (0 when unknown) and the bytes of it on disk so far. */
    readonly onBytes: (totalBytes: number, receivedBytes: number) => void;
}

export type FetchOutcome =
    | { readonly kind: "done"; readonly totalBytes: number }
    /** `signal` was aborted; the partial file holds what arrived. */
    | { readonly kind: "stopped" }
    /** The connection dropped from a server that sends whole files only (no Range), so the rest cannot be asked for. */
    | { readonly kind: "dropped"; readonly receivedBytes: number };

/**
 * Downloads `url` into `filePath`'s partial file from `keptBytes` on; a file whose bytes are all
 * kept is done without a request. Once whole, the partial file keeps its progress (all chunks
 * complete), so the other parts of a split model can fail and resume without it. Rejects with
 * download_failed on an HTTP error, download_size_mismatch when a size the server gave disagrees
 * with another or a body runs past its announced length, or the error `admit` returned; the
 * partial file is left for the caller to keep or delete.
 */
export async function fetchModelFile(options: FetchModelFileOptions): Promise<FetchOutcome> {
    if (options.expectedBytes > 0 && options.keptBytes >= options.expectedBytes) {
        return { kind: "done", totalBytes: options.expectedBytes };
    }
    const handle = await fs.promises.open(partialPath(options.filePath), "r+");
    try {
        const fetched = await fetchInto(handle, options);
        if (fetched.kind === "done") {
            await handle.datasync();
        }
        return fetched;
    } finally {
        await handle.close().catch(() => undefined);
    }
}

/** The state of one download across its requests. */
interface Progress {
    /** The file's size; 0 until a response gives it (a server that never does sends the file whole). */
    totalBytes: number;
    /** The next byte to write. */
    position: number;
    /** Bytes at the start that are complete chunks (or the whole file), as the progress on disk says. */
    completeBytes: number;
}

async function fetchInto(handle: fs.promises.FileHandle, options: FetchModelFileOptions): Promise<FetchOutcome> {
    const progress: Progress = { totalBytes: options.expectedBytes, position: options.keptBytes, completeBytes: options.keptBytes };
    let numFailures = 0;
    /** The server answered a Range request with the whole file (200): a cut body cannot be continued. */
    let sendsWholeFile = false;
    for (;;) {
        if (options.signal.aborted) {
            return { kind: "stopped" };
        }
        try {
            const response = await request(options, progress.position);
            sendsWholeFile = response.status === 200;
            const before = progress.position;
            await writeResponse(handle, options, progress, response);
            if (progress.position > before) {
                numFailures = 0;
            }
            if (progress.totalBytes > 0 ? progress.position >= progress.totalBytes : true) {
                return { kind: "done", totalBytes: progress.position };
            }
        } catch (error) {
            if (options.signal.aborted) {
                return { kind: "stopped" };
            }
            if (error instanceof KvaultError) {
                throw error;
            }
            if (sendsWholeFile && progress.position > 0) {
                return { kind: "dropped", receivedBytes: progress.position };
            }
            // A cut chunk is fetched again whole: the progress on disk names only complete ones.
            progress.position = progress.completeBytes;
            await pause(Math.min(RETRY_MAX_DELAY_MS, RETRY_FIRST_DELAY_MS * 2 ** numFailures++), options.signal);
        }
    }
}

/** A GET from `fromByte` on; rejects with download_failed on an HTTP error status. */
async function request(options: FetchModelFileOptions, fromByte: number): Promise<Response> {
    const response = await fetch(options.url, {
        redirect: "follow",
        signal: options.signal,
        // identity: a compressed body's length is not the file's.
        headers: { "accept-encoding": "identity", range: `bytes=${fromByte}-` }
    });
    if (response.status !== 200 && response.status !== 206) {
        await response.body?.cancel().catch(() => undefined);
        throw new DownloadFailedError(
            `${options.url.slice(0, 200)} answered ${response.status} ${response.statusText}${fromByte === 0 ? "" : ` when asked for the bytes from ${bytes(fromByte)} on`}; check the address, or try again later.`
        );
    }
    return response;
}

/**
 * Checks what `response` announces against what is known, asks `admit`, then writes its body at
 * the bytes it covers, refusing any byte past its announced length.
 */
async function writeResponse(
    handle: fs.promises.FileHandle,
    options: FetchModelFileOptions,
    progress: Progress,
    response: Response
): Promise<void> {
    const announced = readAnnounced(options, progress, response);
    const refused = options.admit(announced.totalBytes, announced.fromByte);
    if (refused !== undefined) {
        await response.body?.cancel().catch(() => undefined);
        throw refused;
    }
    if (announced.fromByte !== progress.position) {
        // A server that ignored the Range header sends the file from its start: the kept chunks are written again.
        progress.position = announced.fromByte;
        progress.completeBytes = 0;
    }
    progress.totalBytes = announced.totalBytes;
    const reader = response.body!.getReader();
    let numBodyBytes = 0;
    for (;;) {
        const { done, value } = await reader.read();
        if (done) {
            break;
        }
        numBodyBytes += value.length;
        if (numBodyBytes > announced.numBodyBytes) {
            await reader.cancel().catch(() => undefined);
            throw new DownloadSizeMismatchError(
                `${options.name}: the server announced ${bytes(announced.numBodyBytes)} in this answer and sent more, so Kvault stopped reading it (nothing past the announced size was written). ` +
                    "The server is broken or hostile; download the file from another source."
            );
        }
        await handle.write(value, 0, value.length, progress.position);
        progress.position += value.length;
        await recordProgress(handle, progress);
        options.onBytes(progress.totalBytes, progress.position);
    }
    if (announced.numBodyBytes !== Infinity && numBodyBytes < announced.numBodyBytes) {
        throw new Error(`the answer ended after ${bytes(numBodyBytes)} of the ${bytes(announced.numBodyBytes)} it announced`);
    }
}

interface Announced {
    /** The file's size the response gives (0: none). */
    readonly totalBytes: number;
    /** The byte its body starts at. */
    readonly fromByte: number;
    /** The length of its body; Infinity when it gives none (then the disk check bounds it). */
    readonly numBodyBytes: number;
}

/** What `response` says it holds, or download_size_mismatch when that disagrees with what is known. */
function readAnnounced(options: FetchModelFileOptions, progress: Progress, response: Response): Announced {
    const lengthHeader = response.headers.get("content-length");
    const contentLength = lengthHeader === null || !/^\d+$/.test(lengthHeader.trim()) ? undefined : Number(lengthHeader);
    const known = progress.totalBytes;
    const mismatch = (what: string): DownloadSizeMismatchError =>
        new DownloadSizeMismatchError(
            `${options.name}: ${what}, so Kvault cannot tell how big the file is and wrote none of this answer. ` +
                "Try again later; if it repeats, the server is broken or hostile: download the file from another source."
        );
    const stated = (count: number): string =>
        options.expectedBytes > 0 && count === options.expectedBytes ? `${bytes(count)} when asked (HEAD)` : `${bytes(count)} before`;
    if (response.status === 200) {
        const totalBytes = contentLength !== undefined && Number.isSafeInteger(contentLength) ? contentLength : 0;
        if (contentLength !== undefined && !Number.isSafeInteger(contentLength)) {
            throw mismatch(`the server announced a Content-Length of ${lengthHeader!.slice(0, 40)} bytes, more than any file`);
        }
        if (known > 0 && totalBytes > 0 && totalBytes !== known) {
            throw mismatch(
                `the server said the file has ${stated(known)} and announced ${bytes(totalBytes)} for the download itself (GET)`
            );
        }
        // Without a length, a size the server gave before still says where the body must end.
        return { totalBytes: totalBytes || known, fromByte: 0, numBodyBytes: totalBytes || known || Infinity };
    }
    const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get("content-range")?.trim() ?? "");
    const [start, end, total] = range === null ? [NaN, NaN, NaN] : [Number(range[1]), Number(range[2]), Number(range[3])];
    if (range === null || !Number.isSafeInteger(total) || !(start <= end && end < total)) {
        throw mismatch(
            `the server answered the bytes from ${bytes(progress.position)} on with the range ${JSON.stringify(response.headers.get("content-range")?.slice(0, 80) ?? "")}, which is no range of a file`
        );
    }
    if (known > 0 && total !== known) {
        throw mismatch(`the server said the file has ${stated(known)} and announced ${bytes(total)} for the download itself (GET)`);
    }
    if (start !== progress.position) {
        throw mismatch(
            `the server was asked for the bytes from ${bytes(progress.position)} on and answered with those from ${bytes(start)} on`
        );
    }
    const numBodyBytes = end - start + 1;
    if (contentLength !== undefined && contentLength !== numBodyBytes) {
        throw mismatch(
            `the server announced the range ${start}-${end} (${bytes(numBodyBytes)}) with a Content-Length of ${bytes(contentLength)}`
        );
    }
    return { totalBytes: total, fromByte: start, numBodyBytes };
}

/** Writes the progress after the file's bytes once another chunk is complete, so a later run keeps it. */
async function recordProgress(handle: fs.promises.FileHandle, progress: Progress): Promise<void> {
    if (progress.totalBytes === 0) {
        return; // a file of unknown size cannot be continued
    }
    const completeBytes =
        progress.position >= progress.totalBytes
            ? progress.totalBytes
            : Math.floor(progress.position / PARTIAL_CHUNK_BYTES) * PARTIAL_CHUNK_BYTES;
    if (completeBytes <= progress.completeBytes) {
        return;
    }
    progress.completeBytes = completeBytes;
    const json = Buffer.from(partialProgress(completeBytes));
    await handle.write(json, 0, json.length, progress.totalBytes);
    await handle.truncate(progress.totalBytes + json.length);
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done(): void {
            clearTimeout(timer);
            signal.removeEventListener("abort", done);
            resolve();
        }
        signal.addEventListener("abort", done, { once: true });
    });
}
