// A loopback HTTP server that answers as Hugging Face's public API does, from recorded answers:
// `/api/models?search=…&filter=gguf` and `/api/models/{owner}/{name}/tree/main`, in the shapes
// huggingface.co answers (ids, downloads, likes; files with type, path, size and lfs.size). Real
// HTTP for the catalogue's search, not a stand-in for Kvault's own parts.
import http from "node:http";
import type { AddressInfo } from "node:net";

/** Recorded search hits, by lower-case word the search text contains. */
export const recordedSearches: Readonly<Record<string, readonly { id: string; downloads: number; likes: number; tags: string[] }[]>> = {
    qwen3: [
        { id: "unsloth/Qwen3-0.6B-GGUF", downloads: 182_113, likes: 96, tags: ["gguf", "qwen3", "text-generation"] },
        { id: "Qwen/Qwen3-8B-GGUF", downloads: 97_402, likes: 188, tags: ["gguf", "qwen3", "text-generation"] },
        { id: "bartowski/Qwen_Qwen3-235B-A22B-GGUF", downloads: 12_530, likes: 41, tags: ["gguf", "qwen3_moe"] }
    ]
};

/** Recorded file lists, by repository: a README, a folder, .gguf files (one far too big for any test machine). */
export const recordedTrees: Readonly<Record<string, readonly Record<string, unknown>[]>> = {
    "unsloth/Qwen3-0.6B-GGUF": [
        { type: "file", oid: "a1", size: 2_170, path: "README.md" },
        { type: "file", oid: "a2", size: 135, path: "Qwen3-0.6B-Q4_K_M.gguf", lfs: { oid: "f1", size: 396_705_472, pointerSize: 135 } },
        { type: "file", oid: "a3", size: 135, path: "Qwen3-0.6B-Q8_0.gguf", lfs: { oid: "f2", size: 639_446_688, pointerSize: 135 } }
    ],
    "bartowski/Qwen_Qwen3-235B-A22B-GGUF": [
        { type: "directory", oid: "d1", size: 0, path: "Qwen_Qwen3-235B-A22B-Q8_0" },
        {
            type: "file",
            oid: "b1",
            size: 135,
            path: "Qwen_Qwen3-235B-A22B-Q4_K_M.gguf",
            lfs: { oid: "f3", size: 142_650_000_000, pointerSize: 135 }
        },
        { type: "file", oid: "b2", size: 1_024, path: "README.md" }
    ]
};

export interface HuggingFaceServerOptions {
    /** More repositories' file lists (made up for a test), by repository. */
    readonly trees?: Readonly<Record<string, readonly Record<string, unknown>[]>>;
    /**
     * Where `/{repo}/resolve/{branch}/{file}` redirects (302, as huggingface.co sends a download to
     * its storage): `${filesUrl}/{file}`, the file's last path segment. Without it, 404.
     */
    readonly filesUrl?: string;
}

export interface HuggingFaceServer {
    readonly url: string;
    /** Every path and query asked for, in order. */
    readonly requests: string[];
    close(): Promise<void>;
}

export async function startHuggingFaceServer(options: HuggingFaceServerOptions = {}): Promise<HuggingFaceServer> {
    const requests: string[] = [];
    const trees = { ...recordedTrees, ...options.trees };
    const server = http.createServer((request, response) => {
        const url = new URL(request.url ?? "/", "http://127.0.0.1");
        requests.push(`${url.pathname}${url.search}`);
        const send = (status: number, body: unknown): void => {
            response.writeHead(status, { "content-type": "application/json" });
            response.end(JSON.stringify(body));
        };
        if (url.pathname === "/api/models") {
            const search = (url.searchParams.get("search") ?? "").toLowerCase();
            if (url.searchParams.get("filter") !== "gguf") {
                send(400, { error: "this recording has GGUF searches only" });
                return;
            }
            const key = Object.keys(recordedSearches).find((word) => search.includes(word));
            send(200, key === undefined ? [] : recordedSearches[key]);
            return;
        }
        const tree = /^\/api\/models\/([^/]+\/[^/]+)\/tree\/main$/.exec(url.pathname);
        if (tree !== null) {
            const files = trees[decodeURIComponent(tree[1]!)];
            if (files === undefined) {
                send(404, { error: "Repository not found" });
                return;
            }
            send(200, files);
            return;
        }
        const resolve = /^\/[^/]+\/[^/]+\/resolve\/[^/]+\/(?:.+\/)?([^/]+)$/.exec(url.pathname);
        if (resolve !== null && options.filesUrl !== undefined) {
            response.writeHead(302, { location: `${options.filesUrl}/${resolve[1]}` });
            response.end();
            return;
        }
        send(404, { error: "Not found" });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    let closed: Promise<void> | undefined;
    return {
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
            (closed ??= new Promise<void>((resolve) => {
                server.closeAllConnections();
                server.close(() => resolve());
            }))
    };
}
