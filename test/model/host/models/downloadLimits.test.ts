import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { freeDiskBytes } from "../../../../host/models/checkDownloadSpace.js";
import { ModelDownloads } from "../../../../host/models/downloadModel.js";
import {
    ensureChunkedModel,
    IPULL_CHUNK_BYTES,
    settled,
    sha256,
    startModelFileServer,
    type ModelFileServer
} from "../../../support/modelFileServer.js";

/** A connection that drops and stays down is given up after this long without a new byte. */
const STALL_MS = 1_500;

// A download is bytes from a server Kvault does not control, written to the user's disk: it must
// fit the free disk, land inside models/ under a name Kvault chose, and be readable by its owner only.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-download-limits-"));
let model: Buffer;
let server: ModelFileServer;
let dataDir = "";
let modelsDirectory = "";
let runNumber = 0;

beforeAll(async () => {
    model = fs.readFileSync(ensureChunkedModel());
    server = await startModelFileServer();
});

beforeEach(() => {
    // As in headless mode: models/ inside a data directory that holds other things too.
    dataDir = path.join(scratch, `data-${++runNumber}`);
    modelsDirectory = path.join(dataDir, "models");
    fs.mkdirSync(dataDir, { recursive: true });
});

afterAll(async () => {
    await server.close();
    fs.rmSync(scratch, { recursive: true, force: true });
});

function filesIn(dir: string): string[] {
    return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

const mode = (file: string): number => fs.statSync(file).mode & 0o777;

describe("downloads that would not fit the disk are refused", () => {
    it("refuses a file whose Content-Length is bigger than the free disk before writing a byte, naming the bytes needed and free", async () => {
        const claimed = 2 ** 50; // 1 PiB
        server.serveDeclared("huge.gguf", claimed);
        const downloads = new ModelDownloads({ modelsDirectory, stallMs: 30_000 });
        const failed = await settled(downloads, downloads.start(`${server.url}/huge.gguf`).id);
        expect(failed).toMatchObject({
            state: "failed",
            resumable: false,
            keptBytes: 0,
            downloadedBytes: 0,
            error: { code: "download_no_space" }
        });
        expect(failed.error!.message).toMatch(
            new RegExp(
                `^huge\\.gguf does not fit: it needs 1,125,899,906,842,624 bytes, and the disk holding ${modelsDirectory.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} ` +
                    "has [\\d,]+ bytes free, of which Kvault keeps 268,435,456 bytes for chats and settings\\. Free some space on that disk, then download again\\.$"
            )
        );
        expect(filesIn(modelsDirectory)).toEqual([]);
        expect(filesIn(dataDir)).toEqual(["models"]);
    });

    it("stops a body that never ends once the disk is down to what Kvault keeps free, and deletes what arrived", async () => {
        server.serveEndless("endless.gguf");
        fs.mkdirSync(modelsDirectory, { recursive: true });
        // The real disk, with all but 24 MiB of its free space reserved: the endless body may write about that much.
        const allowance = 24 * 1024 * 1024;
        const downloads = new ModelDownloads({
            modelsDirectory,
            stallMs: 30_000,
            keepFreeBytes: freeDiskBytes(modelsDirectory) - allowance
        });
        const failed = await settled(downloads, downloads.start(`${server.url}/endless.gguf`).id, 60_000);
        expect(failed, JSON.stringify(failed)).toMatchObject({
            state: "failed",
            resumable: false,
            keptBytes: 0,
            error: { code: "download_no_space" }
        });
        expect(failed.error!.message).toMatch(
            /^The download of endless\.gguf was stopped after [\d,]+ bytes: the server did not say how big the file is, and the disk holding .* has [\d,]+ bytes free, of which Kvault keeps [\d,]+ bytes for chats and settings\. Free some space on that disk\. Nothing could be kept/
        );
        // Far less than the disk: the other helpers' writes on a shared disk only make it stop sooner.
        expect(failed.downloadedBytes).toBeLessThan(allowance + 256 * 1024 * 1024);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(filesIn(modelsDirectory)).toEqual([]);
        expect(filesIn(dataDir)).toEqual(["models"]);
    });
});

describe("a download's files stay inside models/, named by Kvault, readable by the owner only", () => {
    it("names a URL that ends in / after its last segment, inside models/, and keeps its partial file 0600", async () => {
        server.serve("library/", { body: model, ranges: true });
        server.cutAt("library/", IPULL_CHUNK_BYTES + 2 * 1024 * 1024);
        const downloads = new ModelDownloads({ modelsDirectory, stallMs: STALL_MS });
        const failed = await settled(downloads, downloads.start(`${server.url}/library/`).id);
        expect(failed, JSON.stringify(failed)).toMatchObject({
            state: "failed",
            resumable: true,
            path: path.join(modelsDirectory, "library.gguf")
        });
        expect(filesIn(dataDir)).toEqual(["models"]);
        expect(filesIn(modelsDirectory)).toEqual(["library.gguf.download.json", "library.gguf.ipull"]);
        expect(mode(path.join(modelsDirectory, "library.gguf.ipull")).toString(8)).toBe("600");
        expect(mode(path.join(modelsDirectory, "library.gguf.download.json")).toString(8)).toBe("600");
        expect(mode(modelsDirectory).toString(8)).toBe("700");

        server.cutAt("library/", undefined);
        downloads.resume(failed.id);
        const done = await settled(downloads, failed.id);
        expect(done, JSON.stringify(done.error)).toMatchObject({ state: "done", path: path.join(modelsDirectory, "library.gguf") });
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(model));
        expect(mode(done.path).toString(8)).toBe("600");
        expect(filesIn(dataDir)).toEqual(["models"]);
    });

    it("names a download from a bare host after the host, never an empty name", async () => {
        server.serve("", { body: model, ranges: true });
        const downloads = new ModelDownloads({ modelsDirectory, stallMs: 30_000 });
        const done = await settled(downloads, downloads.start(`${server.url}/`).id);
        expect(done, JSON.stringify(done.error)).toMatchObject({ state: "done" });
        expect(path.dirname(done.path)).toBe(modelsDirectory);
        expect(path.basename(done.path)).toMatch(/^127\.0\.0\.1-[0-9a-f]{12}\.gguf$/);
        expect(sha256(fs.readFileSync(done.path))).toBe(sha256(model));
        expect(filesIn(dataDir)).toEqual(["models"]);
    });

    it("refuses a URL with a malformed %-escape before anything starts", () => {
        const downloads = new ModelDownloads({ modelsDirectory });
        expect(() => downloads.start(`${server.url}/bad%E0%A4.gguf`)).toThrow(
            expect.objectContaining({ code: "download_source_invalid", message: expect.stringContaining("malformed %-escape") })
        );
        expect(downloads.list()).toEqual([]);
    });
});
