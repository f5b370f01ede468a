import { describe, expect, it } from "vitest";
import { fitVerdict, kvBytesPerToken } from "../../../../contract/modelCatalogue.js";
import { catalogueEntries } from "../../../../host/models/catalogue/catalogueEntries.js";

const GB = 1e9;

describe("the fit arithmetic", () => {
    it("counts F16 K and V of every layer: Llama 3.1 8B takes 128 KiB a token", () => {
        expect(kvBytesPerToken({ numLayers: 32, numKvHeads: 8, headSize: 128 })).toBe(2 * 32 * 8 * 128 * 2);
        expect(kvBytesPerToken({ numLayers: 32, numKvHeads: 8, headSize: 128 })).toBe(131_072);
    });

    it("puts a file on the GPU when weights and KV fit its free VRAM, else in RAM, else says how far it is", () => {
        const input = { weightsBytes: 4 * GB, kvBytesPerToken: 131_072, contextSize: 8_192, basis: "catalogue" as const };
        const needBytes = 4 * GB + 131_072 * 8_192;
        const gpu = fitVerdict({
            ...input,
            machine: { freeRamBytes: 2 * GB, totalRamBytes: 8 * GB, vram: { freeBytes: 6 * GB, totalBytes: 8 * GB } }
        });
        expect(gpu).toMatchObject({ kind: "gpu", needBytes, kvBytes: 131_072 * 8_192 });
        expect(gpu.text).toBe("fits on the GPU: needs 5.1 GB with 8,192 tokens of KV, 6.0 GB VRAM free");

        const ram = fitVerdict({
            ...input,
            machine: { freeRamBytes: 6 * GB, totalRamBytes: 8 * GB, vram: { freeBytes: 4 * GB, totalBytes: 8 * GB } }
        });
        expect(ram).toMatchObject({ kind: "ram", needBytes });
        expect(ram.text).toBe("fits in RAM: needs 5.1 GB with 8,192 tokens of KV, 6.0 GB free");

        const tooBig = fitVerdict({
            ...input,
            machine: { freeRamBytes: 3 * GB, totalRamBytes: 8 * GB, vram: { freeBytes: 4.5 * GB, totalBytes: 8 * GB } }
        });
        expect(tooBig).toMatchObject({ kind: "tooBig", needBytes });
        expect(tooBig.text).toBe("too big: needs 5.1 GB with 8,192 tokens of KV, this machine has 4.5 GB free");
    });

    it("fits exactly at the free bytes, and not one byte over", () => {
        const machine = { freeRamBytes: 1_000, totalRamBytes: 2_000 };
        expect(fitVerdict({ weightsBytes: 900, kvBytesPerToken: 10, contextSize: 10, basis: "header", machine }).kind).toBe("ram");
        expect(fitVerdict({ weightsBytes: 901, kvBytesPerToken: 10, contextSize: 10, basis: "header", machine }).kind).toBe("tooBig");
    });

    it("says when the KV is not counted (a search hit's file, no header yet)", () => {
        const verdict = fitVerdict({
            weightsBytes: 142.65 * GB,
            kvBytesPerToken: 0,
            contextSize: 0,
            basis: "size",
            machine: { freeRamBytes: 16 * GB, totalRamBytes: 32 * GB }
        });
        expect(verdict.text).toBe(
            "too big: needs 142.7 GB (the file alone: KV unknown until its header is read), this machine has 16.0 GB free"
        );
    });
});

describe("the catalogue's data", () => {
    it("has the asked-for families, each file by quantisation with a size, and whole architecture numbers", () => {
        expect(catalogueEntries.map((entry) => entry.id)).toEqual([
            "llama-3.2-1b",
            "llama-3.2-3b",
            "llama-3.1-8b",
            "qwen3-0.6b",
            "qwen3-1.7b",
            "qwen3-4b",
            "qwen3-8b",
            "gemma-3-1b",
            "gemma-3-4b",
            "phi-4-mini",
            "mistral-7b"
        ]);
        for (const entry of catalogueEntries) {
            expect(
                entry.files.map((file) => file.quant),
                entry.id
            ).toEqual(["Q4_K_M", "Q8_0", "F16"]);
            expect(entry.repo, entry.id).toMatch(/^[\w.-]+\/[\w.-]+-GGUF$/);
            const sizes = entry.files.map((file) => file.sizeBytes);
            expect(
                [...sizes].sort((a, b) => a - b),
                `${entry.id}: Q4_K_M < Q8_0 < F16`
            ).toEqual(sizes);
            for (const file of entry.files) {
                expect(file.fileName.toLowerCase(), entry.id).toContain(file.quant.toLowerCase());
                expect(file.fileName.endsWith(".gguf"), file.fileName).toBe(true);
            }
            for (const value of Object.values(entry.architecture)) {
                expect(Number.isSafeInteger(value) && value > 0, entry.id).toBe(true);
            }
        }
    });
});
