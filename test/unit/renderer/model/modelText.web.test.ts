import { describe, expect, it } from "vitest";
import type { ModelFacts } from "../../../../contract/models.js";
import { estimateText, factRows, formatBytes, formatParameters } from "../../../../renderer/model/modelText.js";

const facts: ModelFacts = {
    path: "/m/llama.gguf",
    fileName: "llama.gguf",
    fileBytes: 4_920_000_000,
    name: "Llama 3.1 8B",
    architecture: "llama",
    parameterCount: 8_030_000_000,
    fileType: "MOSTLY_Q4_K_M",
    trainContextSize: 131_072,
    numLayers: 32,
    kvBytesPerToken: 131_072,
    memory: { plainKvCache: true },
    estimate: {
        contextSize: 4096,
        sequences: 4,
        kvCacheBytes: 2_147_483_648,
        cpu: { ramBytes: 7_500_000_000 },
        gpu: { ramBytes: 300_000_000, vramBytes: 7_200_000_000 }
    }
};

describe("modelText", () => {
    it.each([
        [0, "0 bytes"],
        [1, "1 byte"],
        [1023, "1,023 bytes"],
        [1024, "1.00 KiB"],
        [1536, "1.50 KiB"],
        [10 * 1024 * 1024, "10.0 MiB"],
        [4_920_000_000, "4.58 GiB"],
        [200 * 1024 ** 3, "200 GiB"],
        [-1, "unknown"],
        [Number.NaN, "unknown"]
    ])("formatBytes(%s) is %s", (bytes, text) => {
        expect(formatBytes(bytes)).toBe(text);
    });

    it.each([
        [512, "512"],
        [1_100, "1.1 K"],
        [1_100_000, "1.1 M"],
        [8_030_000_000, "8.03 B"]
    ])("formatParameters(%s) is %s", (count, text) => {
        expect(formatParameters(count)).toBe(text);
    });

    it("lists the facts in order, saying what the file does not state", () => {
        expect(factRows(facts).map((row) => [row.label, row.value])).toEqual([
            ["Name", "Llama 3.1 8B"],
            ["Architecture", "llama"],
            ["Parameters", "8.03 B"],
            ["Quantisation", "MOSTLY_Q4_K_M"],
            ["File size", "4.58 GiB"],
            ["Trained context", "131,072 tokens"],
            ["Layers", "32"],
            ["KV per token", "128 KiB (F16 K and V, all layers)"],
            ["KV cache", "plain: pages can hold it (split mode)"]
        ]);
        const sparse = factRows({
            ...facts,
            name: undefined,
            parameterCount: undefined,
            fileType: undefined,
            trainContextSize: undefined,
            memory: { plainKvCache: false, reason: "the model uses sliding-window attention (4096 tokens), whose cache has another layout" }
        });
        expect(Object.fromEntries(sparse.map((row) => [row.key, row.value]))).toMatchObject({
            name: "llama.gguf",
            parameters: "not stated",
            "file-type": "not stated",
            "train-context": "not stated",
            "memory-kind":
                "not plain: the model uses sliding-window attention (4096 tokens), whose cache has another layout; the engine runs it in unified mode"
        });
    });

    it("states the estimate for the engine's context, or why there is none", () => {
        expect(estimateText(facts)).toBe(
            "For 4,096 tokens × 4 sequences (KV cache 2.00 GiB): on the CPU about 6.98 GiB of RAM; fully on a GPU about 6.71 GiB of VRAM and 286 MiB of RAM."
        );
        expect(estimateText({ ...facts, estimate: { ...facts.estimate!, sequences: 1 } })).toMatch(/^For 4,096 tokens × 1 sequence /);
        expect(estimateText({ ...facts, estimate: undefined })).toBe(
            "No memory estimate: node-llama-cpp cannot estimate this architecture."
        );
    });
});
