import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelDownload } from "../../../../contract/models.js";
import { ModelDownloads, speed, validateDownloadSource } from "../../../../host/models/downloadModel.js";
import { ensureGeneratedModel } from "../../../support/generatedModels.js";
import { settled } from "../../../support/modelFileServer.js";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-download-"));
let model: Buffer;
let server: http.Server;
let base: string;

/** Loopback only: the tiny model whole, slowly (chunks with pauses), a 404, and a JSON body. */
beforeAll(async () => {
    model = fs.readFileSync(ensureGeneratedModel("tiny"));
    server = http.createServer((request, response) => {
        const url = request.url ?? "";
        if (url.startsWith("/tiny.gguf")) {
            response.writeHead(200, { "content-type": "application/octet-stream", "content-length": model.length });
            if (request.method === "HEAD") {
                return void response.end();
            }
            return void response.end(model);
        }
        if (url.startsWith("/slow.gguf")) {
            response.writeHead(200, { "content-type": "application/octet-stream", "content-length": model.length });
            if (request.method === "HEAD") {
                return void response.end();
            }
            const chunk = Math.max(1, Math.ceil(model.length / 200));
            let offset = 0;
            const timer = setInterval(() => {
                if (offset >= model.length || response.destroyed) {
                    clearInterval(timer);
                    response.end();
                    return;
                }
                response.write(model.subarray(offset, offset + chunk));
                offset += chunk;
            }, 50);
            response.on("close", () => clearInterval(timer));
            return;
        }
        if (url.startsWith("/package.gguf")) {
            const body = Buffer.from(JSON.stringify({ name: "not a model", padding: "x".repeat(4096) }));
            response.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length });
            return void response.end(request.method === "HEAD" ? undefined : body);
        }
        response.writeHead(404, { "content-type": "text/plain" });
        response.end("not found");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(scratch, { recursive: true, force: true });
});

function directory(name: string): string {
    return path.join(scratch, name);
}

function filesIn(dir: string): string[] {
    return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

describe("ModelDownloads over a loopback HTTP server", () => {
    it("downloads the tiny model byte for byte, reporting progress", async () => {
        const reports: ModelDownload[] = [];
        const downloads = new ModelDownloads({ modelsDirectory: directory("whole"), onProgress: (record) => reports.push(record) });
        const started = downloads.start(`${base}/tiny.gguf`);
        expect(started).toMatchObject({ state: "downloading", source: `${base}/tiny.gguf` });
        const done = await settled(downloads, started.id);
        expect(done, JSON.stringify(done.error)).toMatchObject({
            state: "done",
            downloadedBytes: model.length,
            totalBytes: model.length,
            error: undefined,
            resumable: false,
            keptBytes: 0,
            notice: undefined
        });
        expect(path.dirname(done.path)).toBe(directory("whole"));
        expect(fs.readFileSync(done.path).equals(model)).toBe(true);
        expect(downloads.list()).toEqual([done]);
        expect(reports.length).toBeGreaterThan(0);
        expect(reports.every((report) => report.id === started.id && report.totalBytes === model.length)).toBe(true);
        const sizes = reports.map((report) => report.downloadedBytes);
        expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
        expect(sizes.at(-1)).toBe(model.length);
    });

    it("cancels mid-way and leaves no partial file", async () => {
        const downloads = new ModelDownloads({ modelsDirectory: directory("cancel") });
        const started = downloads.start(`${base}/slow.gguf`);
        const deadline = Date.now() + 20_000;
        while (downloads.get(started.id)!.downloadedBytes === 0 && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const midway = downloads.get(started.id)!;
        expect(midway.state).toBe("downloading");
        expect(midway.downloadedBytes).toBeGreaterThan(0);
        expect(midway.downloadedBytes).toBeLessThan(model.length);
        const cancelled = await downloads.cancel(started.id);
        expect(cancelled.state).toBe("cancelled");
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(downloads.get(started.id)!.state).toBe("cancelled");
        expect(filesIn(directory("cancel"))).toEqual([]);
    });

    it("dispose (the host's shutdown) stops what runs; from a server without Range support nothing can be resumed, so nothing is kept", async () => {
        const downloads = new ModelDownloads({ modelsDirectory: directory("shutdown") });
        const started = downloads.start(`${base}/slow.gguf`);
        const deadline = Date.now() + 20_000;
        while (downloads.get(started.id)!.downloadedBytes === 0 && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await downloads.dispose();
        expect(downloads.list()).toMatchObject([
            { id: started.id, state: "failed", resumable: false, keptBytes: 0, error: { code: "download_interrupted" } }
        ]);
        expect(downloads.list()[0]!.error!.message).toMatch(
            /^Kvault stopped while slow\.gguf downloaded \([\d,]+ of [\d,]+ bytes\)\. Nothing could be kept \(the server does not accept range requests/
        );
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(filesIn(directory("shutdown"))).toEqual([]);
    });

    it("fails with download_failed on a 404", async () => {
        const downloads = new ModelDownloads({ modelsDirectory: directory("missing") });
        const failed = await settled(downloads, downloads.start(`${base}/missing.gguf`).id);
        expect(failed.state).toBe("failed");
        expect(failed.error?.code).toBe("download_failed");
        expect(failed.error?.message).toMatch(/^Downloading http:\/\/127\.0\.0\.1:\d+\/missing\.gguf failed: .*404/);
        expect(filesIn(directory("missing"))).toEqual([]);
    });

    it("fails a body that is not a GGUF, and deletes it", async () => {
        const downloads = new ModelDownloads({ modelsDirectory: directory("json") });
        const failed = await settled(downloads, downloads.start(`${base}/package.gguf`).id);
        expect(failed.state).toBe("failed");
        expect(failed.error).toMatchObject({
            code: "model_not_gguf",
            message: expect.stringMatching(/not a usable model.*not a GGUF file/s)
        });
        expect(filesIn(directory("json"))).toEqual([]);
    });

    it("measures speed over the last few seconds", () => {
        expect(speed([], 10_000)).toBe(0);
        expect(speed([{ at: 9_000, bytes: 0 }], 10_000)).toBe(0);
        expect(
            speed(
                [
                    { at: 1_000, bytes: 0 },
                    { at: 8_000, bytes: 1_000_000 },
                    { at: 10_000, bytes: 5_000_000 }
                ],
                10_000
            )
        ).toBe(2_000_000);
    });

    it("refuses a source that is not http(s) or hf:, before any download starts", async () => {
        const downloads = new ModelDownloads({ modelsDirectory: directory("refused") });
        for (const source of [
            "file:///etc/passwd",
            "ftp://example.com/m.gguf",
            "javascript:alert(1)",
            "",
            "/m/tiny.gguf",
            `https://x/${"a".repeat(4100)}`
        ]) {
            expect(() => downloads.start(source), source.slice(0, 40)).toThrow(
                expect.objectContaining({ code: "download_source_invalid" })
            );
        }
        expect(downloads.list()).toEqual([]);
        expect(validateDownloadSource("hf:owner/repo:Q4_K_M")).toBe("hf:owner/repo:Q4_K_M");
        await expect(downloads.cancel("nope")).rejects.toMatchObject({ code: "download_unknown" });
    });
});
