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
    kvBytesPerTokenByType: { f16: 131_072, q8_0: 69_632, q4_0: 36_864 },
    heads: { numHeads: 32, numKvHeads: 8, kHeadSize: 128, vHeadSize: 128 },
    slidingWindow: undefined,
    machineRamBytes: 16 * 1024 ** 3,
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
            ["Heads", "32 Q, 8 KV (grouped-query: 4 Q heads share each KV head)"],
            ["Head sizes", "K 128, V 128 values"],
            ["Sliding window", "none"],
            ["KV per token", "128 KiB in F16, K and V of all layers (F16 128 KiB · Q8_0 68.0 KiB · Q4_0 36.0 KiB)"],
            ["KV cache", "plain: pages can hold it (split mode)"]
        ]);
        expect(factRows(facts, "q8_0").find((row) => row.key === "kv-per-token")?.value).toMatch(/^68\.0 KiB in Q8_0, /);
        const narrow = factRows(
            { ...facts, kvBytesPerTokenByType: { f16: 131_072, q8_0: undefined, q4_0: undefined }, slidingWindow: 4096, heads: undefined },
            "q4_0"
        );
        expect(Object.fromEntries(narrow.map((row) => [row.key, row.value]))).toMatchObject({
            heads: "not stated",
            "head-sizes": "not stated",
            "sliding-window": "4,096 tokens",
            "kv-per-token":
                "Q4_0, the engine's KV cache type, cannot hold it; F16 128 KiB · Q8_0 cannot hold it (heads not whole 32-value blocks) · Q4_0 cannot hold it (heads not whole 32-value blocks)"
        });
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
            "For 4,096 tokens × 4 sequences (KV cache 2.00 GiB in F16): on the CPU about 6.98 GiB of RAM; fully on a GPU about 6.71 GiB of VRAM and 286 MiB of RAM. " +
                "This machine has 16.0 GiB of RAM: it fits on the CPU alone."
        );
        expect(estimateText({ ...facts, machineRamBytes: 4 * 1024 ** 3 })).toMatch(
            /This machine has 4.00 GiB of RAM: too little to run it on the CPU alone; offload it to a GPU, or use a smaller quantisation or window\.$/
        );
        expect(estimateText({ ...facts, estimate: { ...facts.estimate!, sequences: 1 } })).toMatch(/^For 4,096 tokens × 1 sequence /);
        expect(estimateText({ ...facts, estimate: undefined })).toBe(
            "No memory estimate: node-llama-cpp cannot estimate this architecture. This machine has 16.0 GiB of RAM."
        );
    });
});
