// A loopback HTTP server for download tests: serves files with or without Range support, an ETag
// and Last-Modified, can cut every response at a byte offset of the file (a connection that
// drops there and stays down) or only the first ranged one (a single drop), serves hostile
// answers (a body that never ends, a size no disk holds, a GET whose size is not the HEAD's), and logs every request; and `settled`,
// which waits for a download to stop running.
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import type { ModelDownload } from "../../contract/models.js";
import { writeGgufFile } from "../../synthetic/gguf/writeGgufFile.js";
import { modelPresets } from "../../synthetic/model/modelPresets.js";
import { planSyntheticModel, SYNTHETIC_MODEL_VERSION } from "../../synthetic/model/syntheticModel.js";
import type { ModelDownloads } from "../../host/models/downloadModel.js";
import { repositoryRoot } from "./generatedModels.js";

/** node-llama-cpp's downloader (ipull) keeps progress in chunks of this many bytes. */
export const IPULL_CHUNK_BYTES = 5 * 1024 * 1024;

/**
 * The tiny preset with 40 layers: about 12 MB, so a download spans three of ipull's 5 MiB chunks
 * (the tiny model, under 1 MB, is one chunk, and a cut chunk is fetched again whole).
 */
export function ensureChunkedModel(): string {
    const modelPath = path.join(repositoryRoot, ".cache", "models", `tiny-40-layers-v${SYNTHETIC_MODEL_VERSION}.gguf`);
    if (!fs.existsSync(modelPath)) {
        fs.mkdirSync(path.dirname(modelPath), { recursive: true });
        const partial = `${modelPath}.${process.pid}.partial`;
        writeGgufFile(partial, planSyntheticModel({ ...modelPresets.tiny, numLayers: 40 }));
        fs.renameSync(partial, modelPath);
    }
    return modelPath;
}

export function sha256(bytes: Buffer): string {
    return crypto.createHash("sha256").update(bytes).digest("hex");
}

export interface ServedFile {
    readonly body: Buffer;
    /** Whether it answers Range requests (206) and says Accept-Ranges: bytes. */
    readonly ranges: boolean;
    /** Default: the body's sha256, quoted. */
    readonly etag?: string;
}

export interface LoggedRequest {
    readonly path: string;
    readonly method: string;
    /** The first byte asked for by a Range header; undefined without one. */
    readonly rangeStart: number | undefined;
    status: number;
    /** The response was cut before its end. */
    cut: boolean;
    /** Bytes of the body written before the end or the cut. */
    sentBytes: number;
}

export interface ModelFileServer {
    /** http://127.0.0.1:PORT */
    readonly url: string;
    readonly log: LoggedRequest[];
    serve(name: string, file: ServedFile): void;
    /** Every response of `name` stops at this byte of the file, the connection destroyed; undefined: none. */
    cutAt(name: string, offset: number | undefined): void;
    /** Only the next ranged response of `name` stops after `numBytes` of its body. */
    cutNextRangedAfter(name: string, numBytes: number): void;
    /**
     * Requests for `name` get no answer at all while `hang` is true (a server that accepts and then says nothing);
     * with `method`, only requests of that method (a file whose HEAD answers and whose GET then hangs).
     */
    hang(name: string, hang: boolean, method?: "GET" | "HEAD"): void;
    /** `name` is a body that never ends: zeros in 64 KiB chunks as fast as the client reads them, no Content-Length. */
    serveEndless(name: string): void;
    /** `name` claims `declaredBytes` (Content-Length) and then sends nothing, holding the connection open. */
    serveDeclared(name: string, declaredBytes: number): void;
    /**
     * `name` answers HEAD with `headBytes` (Content-Length; none when undefined) and GET with
     * `getBytes`: a Content-Length it then never sends (holding the connection open), or "endless",
     * zeros without a length for as long as the client reads.
     */
    serveLyingSize(name: string, headBytes: number | undefined, getBytes: number | "endless"): void;
    /**
     * Called with each request once its response is cut, or once a whole body is handed to the
     * socket, before the client can have read its end (e.g. to change a file part-way).
     */
    onResponse(listener: ((request: LoggedRequest) => void) | undefined): void;
    close(): Promise<void>;
}

export async function startModelFileServer(): Promise<ModelFileServer> {
    const files = new Map<string, ServedFile>();
    const cuts = new Map<string, number>();
    const onceCuts = new Map<string, number>();
    /** Names whose requests get no answer: of any method, or of one. */
    const hanging = new Map<string, "any" | "GET" | "HEAD">();
    const endless = new Set<string>();
    const declared = new Map<string, number>();
    const lying = new Map<string, { headBytes: number | undefined; getBytes: number | "endless" }>();
    const log: LoggedRequest[] = [];
    let responded: ((request: LoggedRequest) => void) | undefined;
    const server = http.createServer((request, response) => {
        const name = decodeURIComponent((request.url ?? "/").split("?")[0]!.slice(1));
        const file = files.get(name);
        const rangeMatch = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? "");
        const entry: LoggedRequest = {
            path: name,
            method: request.method ?? "GET",
            rangeStart: rangeMatch ? Number(rangeMatch[1]) : undefined,
            status: 404,
            cut: false,
            sentBytes: 0
        };
        log.push(entry);
        const hangs = hanging.get(name);
        if (hangs !== undefined && (hangs === "any" || hangs === entry.method)) {
            return;
        }
        const lie = lying.get(name);
        if (lie !== undefined) {
            entry.status = 200;
            const claimed = request.method === "HEAD" ? lie.headBytes : lie.getBytes;
            const headers: http.OutgoingHttpHeaders = {
                "content-type": "application/octet-stream",
                "accept-ranges": "bytes",
                etag: '"lie"'
            };
            if (typeof claimed === "number") {
                headers["content-length"] = claimed;
            }
            response.writeHead(200, headers);
            if (request.method === "HEAD") {
                return void response.end();
            }
            if (claimed !== "endless") {
                response.flushHeaders();
                return void response.on("close", () => responded?.(entry));
            }
        }
        if (endless.has(name) || lie !== undefined) {
            if (lie === undefined) {
                entry.status = 200;
                response.writeHead(200, { "content-type": "application/octet-stream" });
            }
            if (request.method === "HEAD") {
                return void response.end();
            }
            const zeros = Buffer.alloc(64 * 1024);
            const pump = (): void => {
                while (!response.destroyed && response.write(zeros)) {
                    entry.sentBytes += zeros.length;
                }
            };
            response.on("drain", pump);
            response.on("close", () => responded?.(entry));
            return pump();
        }
        const claimed = declared.get(name);
        if (claimed !== undefined) {
            entry.status = 200;
            response.writeHead(200, { "content-type": "application/octet-stream", "content-length": claimed, "accept-ranges": "bytes" });
            if (request.method === "HEAD") {
                return void response.end();
            }
            response.flushHeaders(); // Node holds headers back until the first byte of the body, which never comes
            return void response.on("close", () => responded?.(entry));
        }
        if (file === undefined) {
            response.writeHead(404, { "content-type": "text/plain" }).end("not found");
            return;
        }
        const size = file.body.length;
        let start = 0;
        let end = size - 1;
        const headers: http.OutgoingHttpHeaders = {
            "content-type": "application/octet-stream",
            etag: file.etag ?? `"${sha256(file.body).slice(0, 16)}"`,
            "last-modified": "Mon, 05 Jan 2026 10:00:00 GMT"
        };
        if (file.ranges) {
            headers["accept-ranges"] = "bytes";
        }
        let status = 200;
        if (file.ranges && rangeMatch !== null) {
            start = Number(rangeMatch[1]);
            end = rangeMatch[2] === "" ? size - 1 : Math.min(Number(rangeMatch[2]), size - 1);
            if (start >= size || end < start) {
                entry.status = 416;
                response.writeHead(416, { "content-range": `bytes */${size}` }).end();
                return;
            }
            status = 206;
            headers["content-range"] = `bytes ${start}-${end}/${size}`;
        }
        headers["content-length"] = end - start + 1;
        entry.status = status;
        response.writeHead(status, headers);
        if (request.method === "HEAD") {
            response.end();
            return;
        }
        let stop = cuts.get(name);
        const once = onceCuts.get(name);
        if (once !== undefined && rangeMatch !== null) {
            onceCuts.delete(name);
            stop = Math.min(stop ?? Infinity, start + once);
        }
        if (stop === undefined || stop > end) {
            entry.sentBytes = end + 1 - start;
            response.end(file.body.subarray(start, end + 1));
            // Before the client can have read the body's end: a file changed here is changed for whatever it asks next.
            responded?.(entry);
            return;
        }
        entry.cut = true;
        entry.sentBytes = Math.max(0, stop - start);
        const destroy = (): void =>
            void setTimeout(() => {
                request.socket.destroy();
                responded?.(entry);
            }, 20);
        if (stop <= start) {
            destroy();
        } else {
            response.write(file.body.subarray(start, stop), destroy);
        }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        log,
        serve: (name, file) => void files.set(name, file),
        cutAt: (name, offset) => void (offset === undefined ? cuts.delete(name) : cuts.set(name, offset)),
        cutNextRangedAfter: (name, numBytes) => void onceCuts.set(name, numBytes),
        hang: (name, hang, method) => void (hang ? hanging.set(name, method ?? "any") : hanging.delete(name)),
        serveEndless: (name) => void endless.add(name),
        serveDeclared: (name, declaredBytes) => void declared.set(name, declaredBytes),
        serveLyingSize: (name, headBytes, getBytes) => void lying.set(name, { headBytes, getBytes }),
        onResponse: (listener) => void (responded = listener),
        close: async () => {
            server.closeAllConnections();
            await new Promise<void>((resolve) => server.close(() => resolve()));
        }
    };
}

/** The download's record once it is no longer running (done, failed or cancelled); throws past `timeoutMs`. */
export async function settled(downloads: ModelDownloads, id: string, timeoutMs = 30_000): Promise<ModelDownload> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const record = downloads.get(id)!;
        if (record.state !== "downloading") {
            return record;
        }
        if (Date.now() > deadline) {
            throw new Error(`download ${id} still running: ${JSON.stringify(record)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
    }
}
