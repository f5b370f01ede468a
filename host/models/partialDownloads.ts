// What a download leaves on disk between runs, and across host restarts. fetchModelFile writes
// `<file>.ipull` in the layout node-llama-cpp's downloader (ipull) used, so partial files an older
// Kvault left still resume: the bytes so far at their offsets, then the progress as JSON after the
// file's total size ({"part":0,"chunks":[2,2],"chunkSize":5242880}, 2 being a complete chunk); a
// new run continues after the complete chunks at the start. A model split into parts has one
// partial file per part (`<part>.ipull`), each whole one kept so until all have arrived. Beside the
// download's file Kvault writes `<file>.download.json`: the download's id, source, its parts and
// what the server said about each when it started, so a resume can tell whether one changed. No
// node-llama-cpp import here.
import fs from "node:fs";
import path from "node:path";
import { MAX_DOWNLOAD_PARTS } from "./downloadLayout.js";

export const PARTIAL_SUFFIX = ".ipull";
export const RECORD_SUFFIX = ".download.json";
const RECORD_VERSION = 1;
/** ipull's ChunkStatus.COMPLETE. */
const CHUNK_COMPLETE = 2;
/** Progress is kept in chunks of this many bytes: a cut chunk is fetched again whole. */
export const PARTIAL_CHUNK_BYTES = 5 * 1024 * 1024;
/** ipull's progress JSON is a few bytes per 5 MiB chunk; anything longer is not it. */
const MAX_PROGRESS_BYTES = 4 * 1024 * 1024;

/** What a server said about a file (HEAD), enough to tell a changed file from the same one. */
export interface RemoteFileFacts {
    /** After redirects. */
    readonly url: string;
    /** 0 when the server did not say. */
    readonly totalBytes: number;
    readonly etag: string | undefined;
    readonly lastModified: string | undefined;
    /** `Accept-Ranges: bytes`: the server can send the rest of a file, so a partial one can be continued. */
    readonly acceptsRanges: boolean;
}

/** One file a download fetches: the download's file itself, or one part of a model split into several. */
export interface PartialPart {
    /** The part's own file; its partial one is this plus PARTIAL_SUFFIX. */
    readonly path: string;
    /** What the server said about it when its bytes started arriving; undefined when it could not be asked. */
    readonly remote: RemoteFileFacts | undefined;
}

export interface PartialDownloadRecord {
    readonly id: string;
    readonly source: string;
    /** The final file (for llama.cpp's parts, the first); the record is this plus RECORD_SUFFIX. */
    readonly path: string;
    /** In order; one, at `path`, for a file that is not split. */
    readonly parts: readonly PartialPart[];
    /** ISO 8601. */
    readonly startedAt: string;
}

export function partialPath(filePath: string): string {
    return `${filePath}${PARTIAL_SUFFIX}`;
}

function recordPath(filePath: string): string {
    return `${filePath}${RECORD_SUFFIX}`;
}

/**
 * Creates `filePath`'s partial file, empty and 0600 (not the process's umask, often 0644: readable
 * by every user of the machine), before fetchModelFile writes into it. One already there (a
 * resume) is made 0600 too.
 */
export function preparePartialFile(filePath: string): void {
    const partial = partialPath(filePath);
    fs.closeSync(fs.openSync(partial, "a", 0o600));
    fs.chmodSync(partial, 0o600);
}

/** Writes the record beside the partial file: a temporary file renamed over it, so a crash leaves the old record or the new. */
export function writePartialRecord(record: PartialDownloadRecord): void {
    const target = recordPath(record.path);
    const temporary = `${target}.${process.pid}.tmp`;
    // `remote` is the first part's, as a record without parts (an older Kvault's) says.
    const json = { version: RECORD_VERSION, ...record, remote: record.parts[0]?.remote };
    fs.writeFileSync(temporary, JSON.stringify(json), { mode: 0o600 });
    fs.renameSync(temporary, target);
}

export function removePartialRecord(filePath: string): void {
    if (filePath !== "") {
        fs.rmSync(recordPath(filePath), { force: true });
    }
}

/** Deletes the partial files of `parts` and the record at `filePath`; final files, if any, stay. */
export function removePartialFiles(filePath: string, parts: readonly PartialPart[] = [{ path: filePath, remote: undefined }]): void {
    for (const part of parts) {
        if (part.path !== "") {
            fs.rmSync(partialPath(part.path), { force: true });
        }
    }
    removePartialRecord(filePath);
}

/** Bytes of `parts`' partial files that a new run keeps (readKeptBytes of each, by the size its server gave). */
export function readPartsKeptBytes(parts: readonly PartialPart[]): number {
    return parts.reduce((sum, part) => sum + readKeptBytes(part.path, part.remote?.totalBytes ?? 0), 0);
}

/** Whether `directory` holds any download record: the host then lists its downloads at start. */
export function hasPartialRecords(directory: string): boolean {
    try {
        return fs.readdirSync(directory).some((name) => name.endsWith(RECORD_SUFFIX));
    } catch {
        return false;
    }
}

/**
 * The records in `directory` whose partial file is still there. A record that cannot be read, or
 * names a file outside the directory, is deleted (never the file it names); so is a record whose
 * partial file is gone.
 */
export function readPartialRecords(directory: string): PartialDownloadRecord[] {
    let names: string[];
    try {
        names = fs.readdirSync(directory);
    } catch {
        return [];
    }
    const records: PartialDownloadRecord[] = [];
    for (const name of names.filter((entry) => entry.endsWith(RECORD_SUFFIX)).sort()) {
        const file = path.join(directory, name);
        const record = parseRecord(file);
        const inside = (filePath: string): boolean => path.dirname(filePath) === path.resolve(directory);
        if (
            record === undefined ||
            !inside(record.path) ||
            !record.parts.every((part) => inside(part.path)) ||
            recordPath(record.path) !== file
        ) {
            fs.rmSync(file, { force: true });
            continue;
        }
        if (!record.parts.some((part) => fs.existsSync(partialPath(part.path)))) {
            fs.rmSync(file, { force: true });
            continue;
        }
        records.push(record);
    }
    return records.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

function parseRecord(file: string): PartialDownloadRecord | undefined {
    let value: unknown;
    try {
        value = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch {
        return undefined;
    }
    if (typeof value !== "object" || value === null) {
        return undefined;
    }
    const record = value as Record<string, unknown>;
    if (
        record.version !== RECORD_VERSION ||
        typeof record.id !== "string" ||
        typeof record.source !== "string" ||
        typeof record.path !== "string" ||
        !path.isAbsolute(record.path) ||
        typeof record.startedAt !== "string"
    ) {
        return undefined;
    }
    const parts = parseParts(record.parts ?? [{ path: record.path, remote: record.remote }]);
    if (parts === undefined) {
        return undefined;
    }
    return { id: record.id, source: record.source, path: record.path, parts, startedAt: record.startedAt };
}

/** undefined unless a list of at most MAX_DOWNLOAD_PARTS parts, each an absolute path and valid facts. */
function parseParts(value: unknown): PartialPart[] | undefined {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_DOWNLOAD_PARTS) {
        return undefined;
    }
    const parts: PartialPart[] = [];
    for (const item of value as unknown[]) {
        const part = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>;
        const remote = parseRemote(part.remote);
        if (typeof part.path !== "string" || !path.isAbsolute(part.path) || remote === null) {
            return undefined;
        }
        parts.push({ path: part.path, remote });
    }
    return parts;
}

/** undefined for a record without one; null for one that is malformed. */
function parseRemote(value: unknown): RemoteFileFacts | undefined | null {
    if (value === undefined) {
        return undefined;
    }
    if (typeof value !== "object" || value === null) {
        return null;
    }
    const remote = value as Record<string, unknown>;
    const optionalString = (field: unknown): field is string | undefined => field === undefined || typeof field === "string";
    if (
        typeof remote.url !== "string" ||
        typeof remote.totalBytes !== "number" ||
        !Number.isSafeInteger(remote.totalBytes) ||
        remote.totalBytes < 0 ||
        !optionalString(remote.etag) ||
        !optionalString(remote.lastModified) ||
        typeof remote.acceptsRanges !== "boolean"
    ) {
        return null;
    }
    return {
        url: remote.url,
        totalBytes: remote.totalBytes,
        etag: remote.etag,
        lastModified: remote.lastModified,
        acceptsRanges: remote.acceptsRanges
    };
}

/**
 * The progress JSON for a partial file whose first `keptBytes` (whole chunks, or the whole file)
 * have arrived: one entry per complete chunk, so its length follows the bytes on disk, never a
 * size a server claimed.
 */
export function partialProgress(keptBytes: number): string {
    const chunks = new Array<number>(Math.ceil(keptBytes / PARTIAL_CHUNK_BYTES)).fill(CHUNK_COMPLETE);
    return JSON.stringify({ part: 0, chunks, chunkSize: PARTIAL_CHUNK_BYTES });
}

/**
 * Bytes of `filePath`'s partial file that a new run keeps: the complete chunks at its start, by
 * the progress written after the first `totalBytes` bytes (a chunk after a missing one, which an
 * older Kvault's parallel downloader could leave, is fetched again). 0 when there is no partial
 * file, no progress (a server without Range support), or progress this cannot read.
 */
export function readKeptBytes(filePath: string, totalBytes: number): number {
    if (filePath === "" || totalBytes <= 0) {
        return 0;
    }
    let fd: number;
    try {
        fd = fs.openSync(partialPath(filePath), "r");
    } catch {
        return 0;
    }
    try {
        const numProgressBytes = fs.fstatSync(fd).size - totalBytes;
        if (numProgressBytes <= 0 || numProgressBytes > MAX_PROGRESS_BYTES) {
            return 0;
        }
        const buffer = Buffer.alloc(numProgressBytes);
        const numRead = fs.readSync(fd, buffer, 0, numProgressBytes, totalBytes);
        const progress = JSON.parse(buffer.subarray(0, numRead).toString("utf8")) as {
            part?: unknown;
            chunks?: unknown;
            chunkSize?: unknown;
        };
        if (progress.part !== 0 || !Array.isArray(progress.chunks) || typeof progress.chunkSize !== "number" || progress.chunkSize <= 0) {
            return 0;
        }
        const chunkSize = progress.chunkSize;
        const numComplete = progress.chunks.findIndex((status) => status !== CHUNK_COMPLETE);
        const numPrefix = numComplete === -1 ? progress.chunks.length : numComplete;
        return Math.min(totalBytes, numPrefix * chunkSize);
    } catch {
        return 0;
    } finally {
        fs.closeSync(fd);
    }
}
