import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HUGGING_FACE_URL_VARIABLE } from "../../../../host/models/catalogue/HuggingFaceClient.js";
import { downloadInChild } from "../../../support/downloadInChild.js";
import { startHuggingFaceServer, type HuggingFaceServer } from "../../../support/huggingFaceServer.js";
import { startModelFileServer, type ModelFileServer } from "../../../support/modelFileServer.js";

/** The download's process gets this V8 heap: a download needs a few MiB, whatever size a server claims. */
const MAX_HEAP_MB = 256;
/** Its peak resident memory stays under this (Node and tsx alone take about 150 MB). */
const MAX_RSS_BYTES = 400 * 1024 * 1024;

// A server Kvault does not control may state one size when asked and another when sending, or send
// past the size it stated. node-llama-cpp's downloader planned one entry per 5 MiB of what its own GET
// claimed, so a claim of 2^51 bytes took the host to 2.9 GB and SIGABRT. Each download runs in a
// child process here, as a host would run it, so a download that ends its process fails the test
// instead of ending the test runner.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-lying-size-"));
let server: ModelFileServer;
let huggingFace: HuggingFaceServer;
let runNumber = 0;

beforeAll(async () => {
    server = await startModelFileServer();
    huggingFace = await startHuggingFaceServer({ filesUrl: server.url });
});

afterAll(async () => {
    await server.close();
    await huggingFace.close();
    fs.rmSync(scratch, { recursive: true, force: true });
});

/** Downloads `name` from the file server, or `source` as it is (an hf: reference, resolved at the loopback Hugging Face). */
async function downloadFrom(
    name: string,
    source = `${server.url}/${name}`
): Promise<{ record: NonNullable<Awaited<ReturnType<typeof downloadInChild>>["record"]>; directory: string }> {
    const directory = path.join(scratch, `run-${++runNumber}`);
    // MODEL_ENDPOINT: where node-llama-cpp resolves hf: references, for a Kvault that still asks it.
    const env = { [HUGGING_FACE_URL_VARIABLE]: huggingFace.url, MODEL_ENDPOINT: huggingFace.url };
    const child = await downloadInChild(source, directory, { maxHeapMb: MAX_HEAP_MB, env });
    // The host lives through it: it exited by itself, after posting the record, within its memory.
    expect({ exitCode: child.exitCode, signal: child.signal, posted: child.record !== undefined }, child.stderr).toEqual({
        exitCode: 0,
        signal: null,
        posted: true
    });
    expect(child.maxRssBytes).toBeLessThan(MAX_RSS_BYTES);
    return { record: child.record!, directory };
}

describe("a server that lies about a download's size gets a typed refusal, and the host stays up", () => {
    it("HEAD says 1,000 bytes, the GET 2^51: refused as download_size_mismatch before a byte is written", async () => {
        server.serveLyingSize("two-sizes.gguf", 1_000, 2 ** 51);
        const { record, directory } = await downloadFrom("two-sizes.gguf");
        expect(record).toMatchObject({
            state: "failed",
            resumable: false,
            keptBytes: 0,
            downloadedBytes: 0,
            error: { code: "download_size_mismatch" }
        });
        expect(record.error!.message).toBe(
            "two-sizes.gguf: the server said the file has 1,000 bytes when asked (HEAD) and announced 2,251,799,813,685,248 bytes for the download itself (GET), " +
                "so Kvault cannot tell how big the file is and wrote none of this answer. Try again later; if it repeats, the server is broken or hostile: download the file from another source."
        );
        expect(fs.readdirSync(directory)).toEqual([]);
    });

    it("HEAD gives no size, the GET 2^51: the disk check reads the GET's own size and refuses it as download_no_space", async () => {
        server.serveLyingSize("no-head-size.gguf", undefined, 2 ** 51);
        const { record, directory } = await downloadFrom("no-head-size.gguf");
        expect(record).toMatchObject({ state: "failed", resumable: false, downloadedBytes: 0, error: { code: "download_no_space" } });
        expect(record.error!.message).toMatch(
            /^no-head-size\.gguf does not fit: it needs 2,251,799,813,685,248 bytes, and the disk holding .* has [\d,]+ bytes free, of which Kvault keeps 268,435,456 bytes for chats and settings\. Free some space on that disk, then download again\.$/
        );
        expect(fs.readdirSync(directory)).toEqual([]);
    });

    it("HEAD says 1,000 bytes, the GET sends a body without a length that goes on: stopped at the stated size as download_size_mismatch", async () => {
        server.serveLyingSize("runs-on.gguf", 1_000, "endless");
        const { record, directory } = await downloadFrom("runs-on.gguf");
        expect(record).toMatchObject({ state: "failed", resumable: false, keptBytes: 0, error: { code: "download_size_mismatch" } });
        expect(record.downloadedBytes).toBeLessThanOrEqual(1_000);
        expect(record.error!.message).toBe(
            "runs-on.gguf: the server announced 1,000 bytes in this answer and sent more, so Kvault stopped reading it (nothing past the announced size was written). " +
                "The server is broken or hostile; download the file from another source."
        );
        expect(fs.readdirSync(directory)).toEqual([]);
    });

    it("an hf: reference to such a file is refused the same way: resolving it to a URL believes no size", async () => {
        server.serveLyingSize("hf-two-sizes.gguf", 1_000, 2 ** 51);
        const { record, directory } = await downloadFrom("", "hf:kvault/Lying-GGUF/hf-two-sizes.gguf");
        expect(record).toMatchObject({ state: "failed", downloadedBytes: 0, error: { code: "download_size_mismatch" } });
        expect(record.error!.message).toMatch(
            /^hf_kvault_Lying-GGUF_hf-two-sizes\.gguf: the server said the file has 1,000 bytes when asked \(HEAD\) and announced 2,251,799,813,685,248 bytes for the download itself \(GET\)/
        );
        expect(fs.readdirSync(directory)).toEqual([]);
    });
});
