import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ModelDownload } from "../../../../contract/models.js";
import { LlamaRuntime } from "../../../../engine/runtime/LlamaRuntime.js";
import { ModelDownloads, type ModelDownloadsOptions } from "../../../../host/models/downloadModel.js";
import { inspectModelFile } from "../../../../host/models/inspectModelFile.js";
import { ensureGeneratedModel } from "../../../support/generatedModels.js";
import { startHuggingFaceServer, type HuggingFaceServer } from "../../../support/huggingFaceServer.js";
import { settled, sha256, startModelFileServer, type ModelFileServer } from "../../../support/modelFileServer.js";
import { binaryParts, writeSplitModel } from "../../../support/splitModelFiles.js";

/** A connection that drops and stays down is given up after this long without a new byte. */
const STALL_MS = 1_500;
const NUM_PARTS = 3;

// A model split into files is downloaded as node-llama-cpp's downloader did (every part of
// llama.cpp's `-00001-of-00003.gguf` side by side, binary `.part1of3` parts joined into one
// file), each part through the same bounded checks as one file.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-split-download-"));
let server: ModelFileServer;
let huggingFace: HuggingFaceServer;
/** The split parts, by name. */
const parts = new Map<string, Buffer>();
let whole: Buffer;
let directoryNumber = 0;
let directory = "";

beforeAll(async () => {
    for (const file of writeSplitModel(path.join(scratch, "source"), "Tiny-F16", NUM_PARTS)) {
        parts.set(path.basename(file), fs.readFileSync(file));
    }
    whole = fs.readFileSync(ensureGeneratedModel("tiny"));
    server = await startModelFileServer();
    huggingFace = await startHuggingFaceServer({
        filesUrl: server.url,
        trees: {
            "kvault/Tiny-GGUF": [
                ...[...parts].map(([name, body]) => ({
                    type: "file",
                    oid: name,
                    size: 135,
                    path: name,
                    lfs: { oid: name, size: body.length }
                })),
                { type: "file", oid: "w", size: 135, path: "Tiny-Q8_0.gguf", lfs: { oid: "w", size: whole.length } }
            ]
        }
    });
});

beforeEach(() => {
    directory = path.join(scratch, `run-${++directoryNumber}`);
});

afterAll(async () => {
    await server.close();
    await huggingFace.close();
    fs.rmSync(scratch, { recursive: true, force: true });
});

function filesIn(dir: string): string[] {
    return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

/** Serves the split parts under `prefix` (Range support, an ETag each). */
function serveParts(prefix: string): string[] {
    return [...parts].map(([name, body]) => {
        server.serve(`${prefix}${name}`, { body, ranges: true });
        return `${prefix}${name}`;
    });
}

/** The bounded inspector in this process: a child's start can outlast its deadline on a loaded machine, and the child is inspectModelInChild's own test. */
function splitDownloads(modelsDirectory: string, options: Partial<ModelDownloadsOptions> = {}): ModelDownloads {
    return new ModelDownloads({ modelsDirectory, stallMs: 30_000, inspect: (modelPath) => inspectModelFile(modelPath), ...options });
}

const numBytes = (): number => [...parts.values()].reduce((sum, body) => sum + body.length, 0);

/** GETs logged since `from`, by path. */
function getsSince(from: number): string[] {
    return server.log.slice(from).flatMap((request) => (request.method === "GET" ? [request.path] : []));
}

describe("split models (loopback)", () => {
    it("a URL naming any part of llama.cpp's split downloads every part, side by side, with progress over the total; llama.cpp loads it", async () => {
        const names = serveParts("");
        const reports: ModelDownload[] = [];
        const downloads = splitDownloads(directory, { onProgress: (record) => reports.push(record) });
        const from = server.log.length;
        const done = await settled(downloads, downloads.start(`${server.url}/${names[1]}`).id);
        expect(done, JSON.stringify(done.error)).toMatchObject({
            state: "done",
            path: path.join(directory, names[0]!),
            downloadedBytes: numBytes(),
            totalBytes: numBytes()
        });
        expect(filesIn(directory)).toEqual(names);
        for (const name of names) {
            expect(sha256(fs.readFileSync(path.join(directory, name))), name).toBe(sha256(parts.get(name)!));
        }
        expect(getsSince(from)).toEqual(names);
        expect(reports.every((report) => report.totalBytes === numBytes())).toBe(true);
        const counts = reports.map((report) => report.downloadedBytes);
        expect(counts).toEqual([...counts].sort((a, b) => a - b));
        expect(counts.at(-1)).toBe(numBytes());

        // llama.cpp opens the first part and finds the others by name: the same model as the one file.
        const runtime = await LlamaRuntime.start({ gpu: false, maxThreads: 2 });
        try {
            const split = await runtime.loadModel(done.path);
            const one = await runtime.loadModel(ensureGeneratedModel("tiny"));
            expect(split.fileInfo.splicedParts).toBe(NUM_PARTS);
            expect(split.tokenize("a split model")).toEqual(one.tokenize("a split model"));
            expect(split.fileInsights.totalLayers).toBe(one.fileInsights.totalLayers);
            await split.dispose();
            await one.dispose();
        } finally {
            await runtime.dispose();
        }
    });

    it("binary parts are downloaded one after another and joined into one file, byte for byte, the parts deleted", async () => {
        binaryParts(whole, NUM_PARTS).forEach((body, index) =>
            server.serve(`joined.gguf.part${index + 1}of${NUM_PARTS}`, { body, ranges: true })
        );
        const downloads = splitDownloads(directory);
        const done = await settled(downloads, downloads.start(`${server.url}/joined.gguf.part1of${NUM_PARTS}`).id);
        expect(done, JSON.stringify(done.error)).toMatchObject({
            state: "done",
            path: path.join(directory, "joined.gguf"),
            totalBytes: whole.length
        });
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(whole));
        expect(filesIn(directory)).toEqual(["joined.gguf"]);
    });

    it("a part whose GET claims another size than its HEAD is refused as download_size_mismatch, naming that part; what arrived whole is kept", async () => {
        const names = serveParts("lying-");
        server.serveLyingSize(names[1]!, parts.get(names[1]!.slice("lying-".length))!.length, 2 ** 51);
        const downloads = splitDownloads(directory);
        const failed = await settled(downloads, downloads.start(`${server.url}/${names[0]}`).id);
        expect(failed).toMatchObject({ state: "failed", error: { code: "download_size_mismatch" } });
        expect(failed.error!.message).toMatch(
            new RegExp(
                `^${names[1]}: the server said the file has [\\d,]+ bytes when asked \\(HEAD\\) and announced 2,251,799,813,685,248 bytes for the download itself \\(GET\\)`
            )
        );
        expect(filesIn(directory).filter((name) => !name.endsWith(".ipull") && !name.endsWith(".download.json"))).toEqual([]);
    });

    it("all parts' sizes are checked against the disk before the first byte of any", async () => {
        const names = serveParts("huge-");
        server.serveDeclared(names[2]!, 2 ** 50);
        const downloads = splitDownloads(directory);
        const from = server.log.length;
        const failed = await settled(downloads, downloads.start(`${server.url}/${names[0]}`).id);
        expect(failed).toMatchObject({ state: "failed", downloadedBytes: 0, error: { code: "download_no_space" } });
        const needed = 2 ** 50 + parts.get(names[0]!.slice(5))!.length + parts.get(names[1]!.slice(5))!.length;
        expect(failed.error!.message).toContain(`${names[0]} does not fit: it needs ${needed.toLocaleString("en-US")} bytes`);
        expect(getsSince(from)).toEqual([]);
        expect(filesIn(directory)).toEqual([]);
    });

    it("a part that stops arriving keeps the parts before it; Resume asks only for the rest, and cancel deletes every part", async () => {
        const names = serveParts("resume-");
        server.cutAt(names[1]!, 1_000);
        const downloads = splitDownloads(directory, { stallMs: STALL_MS });
        const failed = await settled(downloads, downloads.start(`${server.url}/${names[0]}`).id);
        const firstBytes = parts.get(names[0]!.slice("resume-".length))!.length;
        expect(failed).toMatchObject({ state: "failed", resumable: true, keptBytes: firstBytes, totalBytes: numBytes() });
        server.cutAt(names[1]!, undefined);
        const from = server.log.length;
        downloads.resume(failed.id);
        const done = await settled(downloads, failed.id);
        expect(done, JSON.stringify(done.error)).toMatchObject({ state: "done", downloadedBytes: numBytes() });
        expect(getsSince(from)).toEqual(names.slice(1));
        expect(filesIn(directory)).toEqual(names);

        const cancelDirectory = path.join(scratch, `cancel-${directoryNumber}`);
        // Its HEAD answers, so every part's download starts (sizes are checked before the first byte of any); its GET hangs.
        server.hang(names[2]!, true, "GET");
        const again = splitDownloads(cancelDirectory);
        const started = again.start(`${server.url}/${names[0]}`);
        const deadline = Date.now() + 20_000;
        while (!filesIn(cancelDirectory).includes(`${names[2]}.ipull`) && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(filesIn(cancelDirectory), "every part's download had started when it was cancelled").toContain(`${names[2]}.ipull`);
        expect(await again.cancel(started.id)).toMatchObject({ state: "cancelled" });
        server.hang(names[2]!, false);
        expect(filesIn(cancelDirectory)).toEqual([]);
    });

    it("hf: references resolve by Hugging Face's URL scheme: a quantization that is split downloads its parts, a file names itself", async () => {
        serveParts("");
        server.serve("Tiny-Q8_0.gguf", { body: whole, ranges: true });
        const downloads = splitDownloads(directory, { huggingFaceUrl: huggingFace.url });
        const split = await settled(downloads, downloads.start("hf:kvault/Tiny-GGUF:F16").id);
        expect(split, JSON.stringify(split.error)).toMatchObject({ state: "done", totalBytes: numBytes() });
        const single = await settled(downloads, downloads.start("hf:kvault/Tiny-GGUF/Tiny-Q8_0.gguf").id);
        expect(single, JSON.stringify(single.error)).toMatchObject({ state: "done", totalBytes: whole.length });
        // node-llama-cpp's names: the repository and quantization for a quantization, the file for a file.
        expect(filesIn(directory)).toEqual([
            "hf_kvault_Tiny-Q8_0.gguf",
            "hf_kvault_Tiny.F16-00001-of-00003.gguf",
            "hf_kvault_Tiny.F16-00002-of-00003.gguf",
            "hf_kvault_Tiny.F16-00003-of-00003.gguf"
        ]);
        expect(huggingFace.requests).toContain("/api/models/kvault/Tiny-GGUF/tree/main");
        const missing = await settled(downloads, downloads.start("hf:kvault/Tiny-GGUF:Q2_K").id);
        expect(missing.error).toMatchObject({ code: "download_failed" });
        expect(missing.error!.message).toContain(
            "kvault/Tiny-GGUF has no .gguf file of the quantization Q2_K; its files include Tiny-F16-00001-of-00003.gguf, Tiny-Q8_0.gguf. Name one: hf:kvault/Tiny-GGUF/FILE.gguf."
        );
    });
});
