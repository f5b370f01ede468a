import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelDownload } from "../../../../contract/models.js";
import { ModelDownloads } from "../../../../host/models/downloadModel.js";
import {
    ensureChunkedModel,
    IPULL_CHUNK_BYTES,
    settled,
    sha256,
    startModelFileServer,
    type LoggedRequest,
    type ModelFileServer
} from "../../../support/modelFileServer.js";

/** A connection that drops and stays down is given up after this long without a new byte. */
const STALL_MS = 1_500;
/** Where the server cuts: one whole 5 MiB chunk and 2 MiB of the next have arrived. */
const CUT = IPULL_CHUNK_BYTES + 2 * 1024 * 1024;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-resume-"));
let model: Buffer;
let server: ModelFileServer;
let directoryNumber = 0;
let directory = "";

beforeAll(async () => {
    model = fs.readFileSync(ensureChunkedModel());
    expect(model.length).toBeGreaterThan(2 * IPULL_CHUNK_BYTES);
    server = await startModelFileServer();
});

beforeEach(() => {
    directory = path.join(scratch, `run-${++directoryNumber}`);
});

afterAll(async () => {
    await server.close();
    fs.rmSync(scratch, { recursive: true, force: true });
});

/** Ranged GETs of `name` logged from `from` on. */
function rangedSince(from: number, name: string): LoggedRequest[] {
    return server.log
        .slice(from)
        .filter((request) => request.path === name && request.method === "GET" && request.rangeStart !== undefined);
}

/**
 * Until the stopped downloader's retries are over: a slice of it stops at the first answer that
 * brings it any bytes, so each range the server cut must have been answered with some since.
 */
async function stoppedSlicesGone(name: string): Promise<void> {
    const ranged = (): LoggedRequest[] => server.log.filter((request) => request.path === name && request.rangeStart !== undefined);
    const cutStarts = new Set(
        ranged()
            .filter((request) => request.cut)
            .map((request) => request.rangeStart)
    );
    const deadline = Date.now() + 15_000;
    for (;;) {
        const requests = ranged();
        if ([...cutStarts].every((start) => requests.findLast((request) => request.rangeStart === start)!.sentBytes > 0)) {
            return;
        }
        if (Date.now() > deadline) {
            throw new Error(`the stopped download of ${name} still retries ${[...cutStarts].join(", ")}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
}

function filesIn(dir: string): string[] {
    return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

/** Downloads `name` against a server cut at CUT until it stalls: failed, resumable, one chunk kept. */
async function dropHalfway(downloads: ModelDownloads, name: string): Promise<ModelDownload> {
    server.cutAt(name, CUT);
    const failed = await settled(downloads, downloads.start(`${server.url}/${name}`).id);
    expect(failed, JSON.stringify(failed)).toMatchObject({
        state: "failed",
        resumable: true,
        keptBytes: IPULL_CHUNK_BYTES,
        downloadedBytes: CUT,
        totalBytes: model.length
    });
    server.cutAt(name, undefined);
    return failed;
}

describe("resuming downloads (loopback)", () => {
    it("a single dropped connection is retried by the downloader itself, from the cut chunk, and the file arrives whole", async () => {
        server.serve("once.gguf", { body: model, ranges: true });
        server.cutNextRangedAfter("once.gguf", 2 * 1024 * 1024);
        const reports: number[] = [];
        const downloads = new ModelDownloads({
            modelsDirectory: directory,
            stallMs: 30_000,
            onProgress: (record) => reports.push(record.downloadedBytes)
        });
        const from = server.log.length;
        const done = await settled(downloads, downloads.start(`${server.url}/once.gguf`).id);
        expect(done, JSON.stringify(done.error)).toMatchObject({ state: "done", downloadedBytes: model.length, resumable: false });
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(model));
        const ranged = rangedSince(from, "once.gguf");
        const cut = ranged.find((request) => request.cut)!;
        expect(cut.rangeStart! % IPULL_CHUNK_BYTES).toBe(0);
        // The retry asks again from the start of the chunk that was cut.
        expect(ranged.slice(ranged.indexOf(cut) + 1).some((request) => request.rangeStart === cut.rangeStart)).toBe(true);
        // ipull's own count falls back while it fetches the chunk again; the record's never does.
        expect(reports).toEqual([...reports].sort((a, b) => a - b));
        expect(filesIn(directory)).toEqual(["once.gguf"]);
    });

    it("a connection that stays down fails the download with download_interrupted, keeps the whole chunks, and Resume asks only for the rest", async () => {
        server.serve("drop.gguf", { body: model, ranges: true });
        const reports: ModelDownload[] = [];
        const downloads = new ModelDownloads({
            modelsDirectory: directory,
            stallMs: STALL_MS,
            onProgress: (record) => reports.push(record)
        });
        const failed = await dropHalfway(downloads, "drop.gguf");
        expect(failed.error?.code).toBe("download_interrupted");
        expect(failed.error?.message).toBe(
            `The download of drop.gguf stopped: no data arrived for 1.5 s after 7,340,032 of ${model.length.toLocaleString("en-US")} bytes, ` +
                "and Kvault's retries got no further. 5,242,880 bytes are kept; Resume continues from there."
        );
        expect(filesIn(directory)).toEqual(["drop.gguf.download.json", "drop.gguf.ipull"]);

        const from = server.log.length;
        reports.length = 0;
        const resumed = downloads.resume(failed.id);
        expect(resumed).toMatchObject({ id: failed.id, state: "downloading", error: undefined, resumable: false });
        const done = await settled(downloads, failed.id);
        expect(done, JSON.stringify(done)).toMatchObject({ state: "done", downloadedBytes: model.length, notice: undefined });
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(model));
        const starts = rangedSince(from, "drop.gguf").map((request) => request.rangeStart!);
        // The server saw Range requests from the bytes on disk on, never from 0.
        expect(Math.min(...starts)).toBe(IPULL_CHUNK_BYTES);
        expect(filesIn(directory)).toEqual(["drop.gguf"]);
        // The resumed run counts from the kept chunk up.
        const counts = reports.map((report) => report.downloadedBytes);
        expect(counts[0]).toBeGreaterThanOrEqual(IPULL_CHUNK_BYTES);
        expect(counts).toEqual([...counts].sort((a, b) => a - b));
    });

    it("a file that changed on the server (same size, another ETag) is downloaded again from zero, never spliced", async () => {
        server.serve("changed.gguf", { body: model, ranges: true, etag: '"v1"' });
        const downloads = new ModelDownloads({ modelsDirectory: directory, stallMs: STALL_MS });
        const failed = await dropHalfway(downloads, "changed.gguf");
        const changed = Buffer.from(model);
        changed.fill(7, IPULL_CHUNK_BYTES - 4096); // the weights differ, in the kept chunk's tail and after it
        server.serve("changed.gguf", { body: changed, ranges: true, etag: '"v2"' });
        const from = server.log.length;
        downloads.resume(failed.id);
        const done = await settled(downloads, failed.id);
        expect(done.notice).toBe(
            'Started again from zero: the file on the server changed since the partial download (its ETag changed from "v1" to "v2").'
        );
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(changed));
        expect(rangedSince(from, "changed.gguf").some((request) => request.rangeStart === 0)).toBe(true);
    });

    it("a file that changes on the server while it downloads is deleted at the end, not kept spliced", async () => {
        server.serve("moving.gguf", { body: model, ranges: true, etag: '"v1"' });
        const changed = Buffer.from(model);
        changed.fill(9, model.length - 1024 * 1024);
        // After the first whole ranged answer, the server has the new version.
        server.onResponse((request) => {
            if (request.path === "moving.gguf" && request.rangeStart !== undefined && !request.cut) {
                server.serve("moving.gguf", { body: changed, ranges: true, etag: '"v2"' });
                server.onResponse(undefined);
            }
        });
        const downloads = new ModelDownloads({ modelsDirectory: directory, stallMs: 30_000 });
        const failed = await settled(downloads, downloads.start(`${server.url}/moving.gguf`).id);
        expect(failed).toMatchObject({ state: "failed", resumable: false, error: { code: "download_changed" } });
        expect(failed.error?.message).toBe(
            'The file on the server changed while moving.gguf downloaded (its ETag changed from "v1" to "v2"), so what arrived may mix two versions; it was deleted. Download it again.'
        );
        expect(filesIn(directory)).toEqual([]);
    });

    it("a file whose size changed is downloaded again from zero", async () => {
        server.serve("grown.gguf", { body: model, ranges: true, etag: '"same"' });
        const downloads = new ModelDownloads({ modelsDirectory: directory, stallMs: STALL_MS });
        const failed = await dropHalfway(downloads, "grown.gguf");
        const grown = Buffer.concat([model, Buffer.alloc(4096)]);
        server.serve("grown.gguf", { body: grown, ranges: true, etag: '"same"' });
        downloads.resume(failed.id);
        const done = await settled(downloads, failed.id);
        expect(done.notice).toBe(
            `Started again from zero: the file on the server changed since the partial download (its size changed from ${model.length.toLocaleString("en-US")} to ${grown.length.toLocaleString("en-US")} bytes).`
        );
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(grown));
    });

    it("a server that stopped accepting Range requests: Resume starts again from zero and gets the whole file", async () => {
        server.serve("lost-ranges.gguf", { body: model, ranges: true });
        const downloads = new ModelDownloads({ modelsDirectory: directory, stallMs: STALL_MS });
        const failed = await dropHalfway(downloads, "lost-ranges.gguf");
        // The stopped downloader's slices retry on their own until a request succeeds; answered 200
        // instead of 206 they would fail where no one handles it (host/models/ignoreIpullRejections.ts).
        await stoppedSlicesGone("lost-ranges.gguf");
        server.serve("lost-ranges.gguf", { body: model, ranges: false });
        const from = server.log.length;
        downloads.resume(failed.id);
        const done = await settled(downloads, failed.id);
        expect(done.notice).toBe("Started again from zero: the server no longer accepts range requests.");
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(model));
        expect(rangedSince(from, "lost-ranges.gguf").filter((request) => request.status === 206)).toEqual([]);
    });

    it("a server without Range support that drops the connection: the download fails, nothing is kept, and Resume is refused", async () => {
        server.serve("no-ranges.gguf", { body: model, ranges: false });
        server.cutAt("no-ranges.gguf", CUT);
        const downloads = new ModelDownloads({ modelsDirectory: directory, stallMs: 30_000 });
        const failed = await settled(downloads, downloads.start(`${server.url}/no-ranges.gguf`).id);
        server.cutAt("no-ranges.gguf", undefined);
        expect(failed).toMatchObject({ state: "failed", resumable: false, keptBytes: 0, error: { code: "download_interrupted" } });
        expect(failed.error?.message).toMatch(
            /^The connection to 127\.0\.0\.1:\d+ dropped after 7,340,032 of [\d,]+ bytes, and the server does not accept range requests, .*The partial file was deleted; download it again\.$/
        );
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(filesIn(directory)).toEqual([]);
        expect(() => downloads.resume(failed.id)).toThrow(expect.objectContaining({ code: "download_not_resumable" }));
    });

    it("the host stopping keeps the partial file: the next host lists it as resumable and finishes it from the kept chunk", async () => {
        server.serve("host.gguf", { body: model, ranges: true });
        server.cutAt("host.gguf", CUT);
        const first = new ModelDownloads({ modelsDirectory: directory, stallMs: 60_000 });
        const started = first.start(`${server.url}/host.gguf`);
        const deadline = Date.now() + 20_000;
        while (first.get(started.id)!.downloadedBytes < CUT && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await first.dispose();
        server.cutAt("host.gguf", undefined);
        expect(first.get(started.id)).toMatchObject({ state: "failed", resumable: true, keptBytes: IPULL_CHUNK_BYTES });
        expect(filesIn(directory)).toEqual(["host.gguf.download.json", "host.gguf.ipull"]);

        const next = new ModelDownloads({ modelsDirectory: directory, stallMs: STALL_MS });
        const listed = next.list();
        expect(listed).toMatchObject([
            {
                id: started.id,
                source: `${server.url}/host.gguf`,
                state: "failed",
                resumable: true,
                keptBytes: IPULL_CHUNK_BYTES,
                totalBytes: model.length
            }
        ]);
        expect(listed[0]!.error).toEqual({
            code: "download_interrupted",
            message: `Kvault stopped while host.gguf downloaded; 5,242,880 of ${model.length.toLocaleString("en-US")} bytes are kept. Resume continues from there.`
        });
        const from = server.log.length;
        // Starting the same source again resumes it rather than starting over.
        expect(next.start(`${server.url}/host.gguf`)).toMatchObject({ id: started.id, state: "downloading" });
        const done = await settled(next, started.id);
        expect(done.state).toBe("done");
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(model));
        expect(Math.min(...rangedSince(from, "host.gguf").map((request) => request.rangeStart!))).toBe(IPULL_CHUNK_BYTES);
    });

    it("a server that answers nothing when Resume is asked: the download stops again and keeps its chunk", async () => {
        server.serve("silent.gguf", { body: model, ranges: true });
        const downloads = new ModelDownloads({ modelsDirectory: directory, stallMs: STALL_MS });
        const failed = await dropHalfway(downloads, "silent.gguf");
        server.hang("silent.gguf", true);
        downloads.resume(failed.id);
        const again = await settled(downloads, failed.id);
        expect(again).toMatchObject({
            state: "failed",
            resumable: true,
            keptBytes: IPULL_CHUNK_BYTES,
            error: { code: "download_interrupted" }
        });
        expect(again.error?.message).toBe(
            `The download of silent.gguf stopped: no data arrived for 1.5 s after 5,242,880 of ${model.length.toLocaleString("en-US")} bytes, ` +
                "and Kvault's retries got no further. 5,242,880 bytes are kept; Resume continues from there."
        );
        server.hang("silent.gguf", false);
        downloads.resume(failed.id);
        const done = await settled(downloads, failed.id);
        expect(done.state).toBe("done");
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(model));
    });

    it("cancelling a resumable download deletes its partial file and record", async () => {
        server.serve("discard.gguf", { body: model, ranges: true });
        const downloads = new ModelDownloads({ modelsDirectory: directory, stallMs: STALL_MS });
        const failed = await dropHalfway(downloads, "discard.gguf");
        expect(await downloads.cancel(failed.id)).toMatchObject({ state: "cancelled", resumable: false, keptBytes: 0 });
        expect(filesIn(directory)).toEqual([]);
        expect(() => downloads.resume(failed.id)).toThrow(expect.objectContaining({ code: "download_not_resumable" }));
        expect(new ModelDownloads({ modelsDirectory: directory }).list()).toEqual([]);
    });
});
