// The catalogue and Hugging Face search over real HTTP to a loopback server that answers with
// recorded HF-shaped answers (test/support/huggingFaceServer.ts).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LibraryModel } from "../../../../contract/models.js";
import { HuggingFaceAnswerError, HuggingFaceClient } from "../../../../host/models/catalogue/HuggingFaceClient.js";
import { ModelCatalogue } from "../../../../host/models/catalogue/ModelCatalogue.js";
import { startHuggingFaceServer, type HuggingFaceServer } from "../../../support/huggingFaceServer.js";

const GB = 1e9;
const ram = () => ({ freeBytes: 8 * GB, totalBytes: 16 * GB });
const cpuEngine = async () => ({ vram: undefined }) as never;

function catalogue(baseUrl: string, options: { library?: readonly LibraryModel[]; vram?: { usedBytes: number; totalBytes: number } } = {}) {
    return new ModelCatalogue({
        huggingFace: new HuggingFaceClient(baseUrl),
        resourceUse: options.vram === undefined ? cpuEngine : async () => ({ vram: options.vram }) as never,
        libraryModels: async () => options.library ?? [],
        ram
    });
}

describe("the model catalogue", () => {
    let server: HuggingFaceServer;
    beforeAll(async () => {
        server = await startHuggingFaceServer();
    });
    afterAll(async () => {
        await server.close();
    });

    it("judges every file by the catalogue's numbers, against free RAM when the engine runs on the CPU", async () => {
        const view = await catalogue(server.url).view(4_096);
        expect(view.machine).toEqual({ freeRamBytes: 8 * GB, totalRamBytes: 16 * GB });
        expect(view.vramNote).toMatch(/CPU/);
        const llama8b = view.models.find((model) => model.id === "llama-3.1-8b")!;
        const [q4, , f16] = llama8b.files;
        expect(q4).toMatchObject({ fit: { kind: "ram", basis: "catalogue", kvBytes: 131_072 * 4_096 } });
        expect(f16!.fit.kind).toBe("tooBig");
        expect(f16!.fit.text).toMatch(/^too big: needs 16\.6 GB with 4,096 tokens of KV, this machine has 8\.0 GB free$/);
        expect(q4!.downloadSource).toBe(
            `${server.url}/bartowski/Meta-Llama-3.1-8B-Instruct-GGUF/resolve/main/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf`
        );
    });

    it("uses the GPU's free VRAM, and a library file's own header numbers when it has one", async () => {
        const header = {
            fileName: "Qwen3-0.6B-Q8_0.gguf",
            fileBytes: 639_446_688,
            kvBytesPerToken: 114_688,
            missing: false
        } as LibraryModel;
        const view = await catalogue(server.url, { library: [header], vram: { usedBytes: 2 * GB, totalBytes: 12 * GB } }).view(8_192);
        expect(view.machine.vram).toEqual({ freeBytes: 10 * GB, totalBytes: 12 * GB });
        const qwen = view.models.find((model) => model.id === "qwen3-0.6b")!;
        expect(qwen.files[1]!.fit).toMatchObject({ kind: "gpu", basis: "header", needBytes: 639_446_688 + 114_688 * 8_192 });
        expect(qwen.files[0]!.fit.basis).toBe("catalogue");
    });

    it("searches Hugging Face's GGUF models and lists a repository's .gguf files with their sizes", async () => {
        const found = await catalogue(server.url).search("Qwen3");
        expect(found).toEqual({
            kind: "online",
            query: "Qwen3",
            hits: [
                { repo: "unsloth/Qwen3-0.6B-GGUF", downloads: 182_113, likes: 96 },
                { repo: "Qwen/Qwen3-8B-GGUF", downloads: 97_402, likes: 188 },
                { repo: "bartowski/Qwen_Qwen3-235B-A22B-GGUF", downloads: 12_530, likes: 41 }
            ]
        });
        expect(server.requests.at(-1)).toBe("/api/models?search=Qwen3&filter=gguf&sort=downloads&limit=30");
        const files = await catalogue(server.url).repoFiles("bartowski/Qwen_Qwen3-235B-A22B-GGUF");
        expect(files.kind).toBe("online");
        if (files.kind === "online") {
            expect(files.files.map((file) => [file.fileName, file.sizeBytes, file.fit.kind, file.fit.basis])).toEqual([
                ["Qwen_Qwen3-235B-A22B-Q4_K_M.gguf", 142_650_000_000, "tooBig", "size"]
            ]);
        }
    });

    it("says offline when Hugging Face cannot be reached, and refuses an answer of another shape with a typed error", async () => {
        const closed = await startHuggingFaceServer();
        await closed.close();
        const offline = await catalogue(closed.url).search("qwen3");
        expect(offline.kind).toBe("offline");
        expect(offline.kind === "offline" && offline.message).toMatch(
            /^offline: the catalogue only \(127\.0\.0\.1:\d+ could not be reached: /
        );

        const odd = http.createServer((_request, response) => {
            response.writeHead(200, { "content-type": "application/json" });
            response.end(JSON.stringify({ models: [] }));
        });
        await new Promise<void>((resolve) => odd.listen(0, "127.0.0.1", resolve));
        try {
            const url = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
            await expect(catalogue(url).search("qwen3")).rejects.toThrow(HuggingFaceAnswerError);
            await expect(catalogue(url).search("qwen3")).rejects.toThrow(/answered an object, not a list of models/);
        } finally {
            odd.closeAllConnections();
            await new Promise<void>((resolve) => odd.close(() => resolve()));
        }
        await expect(catalogue(server.url).repoFiles("nobody/none")).rejects.toThrow(/answered 404/);
    });
});
