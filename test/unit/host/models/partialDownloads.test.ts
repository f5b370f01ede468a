import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
    hasPartialRecords,
    partialPath,
    readKeptBytes,
    readPartialRecords,
    readPartsKeptBytes,
    removePartialFiles,
    writePartialRecord,
    type PartialDownloadRecord
} from "../../../../host/models/partialDownloads.js";
import { describeRemoteChange, whyNotResumable } from "../../../../host/models/probeRemoteFile.js";

const CHUNK = 5 * 1024 * 1024;
let directory = "";

beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-partial-"));
});

afterEach(() => {
    fs.rmSync(directory, { recursive: true, force: true });
});

/** A partial file as ipull leaves it: `totalBytes` of data (sparse here), then its progress JSON. */
function partial(name: string, totalBytes: number, chunks: number[]): string {
    const file = path.join(directory, name);
    const fd = fs.openSync(partialPath(file), "w");
    fs.writeSync(fd, JSON.stringify({ part: 0, chunks, chunkSize: CHUNK, parallelStreams: 3 }), totalBytes);
    fs.closeSync(fd);
    return file;
}

const remote = {
    url: "https://example.com/m.gguf",
    totalBytes: 12 * 1024 * 1024,
    etag: '"v1"',
    lastModified: undefined,
    acceptsRanges: true
};

describe("partial downloads on disk", () => {
    it("counts the complete chunks at the start (a chunk after a missing one is fetched again), the last one short; nothing for missing or unreadable progress", () => {
        const total = 12 * 1024 * 1024;
        expect(readKeptBytes(partial("a.gguf", total, [2, 1, 0]), total)).toBe(CHUNK);
        expect(readKeptBytes(partial("b.gguf", total, [2, 0, 2]), total)).toBe(CHUNK);
        expect(readKeptBytes(partial("e.gguf", total, [2, 2, 2]), total)).toBe(total);
        expect(readKeptBytes(partial("c.gguf", total, [0, 1, 0]), total)).toBe(0);
        // The server's size changed: the progress is not where ipull wrote it.
        expect(readKeptBytes(path.join(directory, "a.gguf"), total + 100)).toBe(0);
        expect(readKeptBytes(path.join(directory, "none.gguf"), total)).toBe(0);
        fs.writeFileSync(partialPath(path.join(directory, "d.gguf")), Buffer.alloc(total));
        expect(readKeptBytes(path.join(directory, "d.gguf"), total)).toBe(0);
    });

    it("lists records whose partial file is there, and deletes records that are unreadable, point elsewhere or lost their file", () => {
        const kept = partial("kept.gguf", 100, [2]);
        const record: PartialDownloadRecord = {
            id: "d1",
            source: remote.url,
            path: kept,
            parts: [{ path: kept, remote }],
            startedAt: "2026-01-05T10:00:00.000Z"
        };
        writePartialRecord(record);
        const gone = path.join(directory, "gone.gguf");
        writePartialRecord({ ...record, id: "d2", path: gone, parts: [{ path: gone, remote }] });
        fs.writeFileSync(path.join(directory, "bad.gguf.download.json"), "{");
        fs.writeFileSync(
            path.join(directory, "elsewhere.gguf.download.json"),
            JSON.stringify({ version: 1, id: "d3", source: "x", path: "/etc/passwd", startedAt: "x" })
        );
        expect(hasPartialRecords(directory)).toBe(true);
        expect(readPartialRecords(directory)).toEqual([record]);
        expect(fs.readdirSync(directory).sort()).toEqual(["kept.gguf.download.json", "kept.gguf.ipull"]);
        removePartialFiles(kept);
        expect(fs.readdirSync(directory)).toEqual([]);
        expect(hasPartialRecords(directory)).toBe(false);
        expect(hasPartialRecords(path.join(directory, "missing"))).toBe(false);
    });

    it("reads a split model's record with each part's facts, and an older Kvault's record (no parts) as one part; keeps the kept chunks of every part", () => {
        const first = partial("m-00001-of-00002.gguf", remote.totalBytes, [2, 2, 2]);
        const second = partial("m-00002-of-00002.gguf", remote.totalBytes, [2, 0, 0]);
        const split: PartialDownloadRecord = {
            id: "s1",
            source: "https://example.com/m-00001-of-00002.gguf",
            path: first,
            parts: [
                { path: first, remote },
                { path: second, remote: { ...remote, etag: '"v2"' } }
            ],
            startedAt: "2026-01-05T10:00:00.000Z"
        };
        writePartialRecord(split);
        const old = partial("old.gguf", remote.totalBytes, [2]);
        fs.writeFileSync(
            `${old}.download.json`,
            JSON.stringify({ version: 1, id: "o1", source: remote.url, path: old, remote, startedAt: "2026-01-04T10:00:00.000Z" })
        );
        const records = readPartialRecords(directory);
        expect(records).toEqual([
            { ...split, id: "o1", source: remote.url, path: old, parts: [{ path: old, remote }], startedAt: "2026-01-04T10:00:00.000Z" },
            split
        ]);
        expect(readPartsKeptBytes(split.parts)).toBe(remote.totalBytes + CHUNK);
        removePartialFiles(split.path, split.parts);
        expect(fs.readdirSync(directory).sort()).toEqual(["old.gguf.download.json", "old.gguf.ipull"]);
    });

    it("tells a changed file by size, then ETag, then Last-Modified, and says when a file cannot be checked", () => {
        expect(describeRemoteChange(remote, remote)).toBeUndefined();
        expect(describeRemoteChange(remote, { ...remote, totalBytes: 1 })).toBe("its size changed from 12,582,912 to 1 bytes");
        expect(describeRemoteChange(remote, { ...remote, etag: '"v2"' })).toBe('its ETag changed from "v1" to "v2"');
        expect(
            describeRemoteChange({ ...remote, etag: undefined, lastModified: "a" }, { ...remote, etag: undefined, lastModified: "b" })
        ).toBe("its Last-Modified changed from a to b");
        expect(whyNotResumable(remote)).toBeUndefined();
        expect(whyNotResumable(undefined)).toMatch(/could not ask the server/);
        expect(whyNotResumable({ ...remote, acceptsRanges: false })).toMatch(/does not accept range requests/);
        expect(whyNotResumable({ ...remote, etag: undefined })).toMatch(/no ETag or Last-Modified/);
    });
});
