// The curated model catalogue: well-known GGUF chat models, their Hugging Face repositories and
// files by quantisation, and the architecture numbers a KV estimate needs (the GGUF header's
// block_count, attention.head_count_kv, attention.key_length and context_length).
//
// Source: the repositories' model cards and file listings on huggingface.co (the "Files" tab's
// sizes, in bytes), and each model's config.json for the architecture. Recorded on 2026-12-02,
// from notes: this file was written on a machine without network access, so names and sizes
// need checking against the repositories (`hf:` listings) before a release. A download never
// trusts these sizes: the server's Content-Length and the disk check decide
// (host/models/checkDownloadSpace.ts).
//
// Gemma 3's sliding-window layers hold 1,024 tokens in llama.cpp; the catalogue counts every
// layer at the full context, so its KV estimate for Gemma 3 is an upper bound.
import type { CatalogueQuant, KvArchitecture } from "../../../contract/modelCatalogue.js";

export interface CatalogueEntry {
    readonly id: string;
    readonly name: string;
    readonly family: string;
    readonly parameters: string;
    readonly repo: string;
    readonly architecture: KvArchitecture;
    readonly files: readonly { readonly quant: CatalogueQuant; readonly fileName: string; readonly sizeBytes: number }[];
}

export const catalogueSource = {
    source: "huggingface.co model cards, file listings and config.json of each repository",
    recordedOn: "2026-12-02"
} as const;

const llama = (numLayers: number, headSize: number): KvArchitecture => ({ numLayers, numKvHeads: 8, headSize, trainContextSize: 131_072 });
const qwen3 = (numLayers: number): KvArchitecture => ({ numLayers, numKvHeads: 8, headSize: 128, trainContextSize: 40_960 });

export const catalogueEntries: readonly CatalogueEntry[] = [
    {
        id: "llama-3.2-1b",
        name: "Llama 3.2 1B Instruct",
        family: "Llama 3",
        parameters: "1B",
        repo: "bartowski/Llama-3.2-1B-Instruct-GGUF",
        architecture: llama(16, 64),
        files: [
            { quant: "Q4_K_M", fileName: "Llama-3.2-1B-Instruct-Q4_K_M.gguf", sizeBytes: 807_694_464 },
            { quant: "Q8_0", fileName: "Llama-3.2-1B-Instruct-Q8_0.gguf", sizeBytes: 1_321_083_008 },
            { quant: "F16", fileName: "Llama-3.2-1B-Instruct-f16.gguf", sizeBytes: 2_479_595_616 }
        ]
    },
    {
        id: "llama-3.2-3b",
        name: "Llama 3.2 3B Instruct",
        family: "Llama 3",
        parameters: "3B",
        repo: "bartowski/Llama-3.2-3B-Instruct-GGUF",
        architecture: llama(28, 128),
        files: [
            { quant: "Q4_K_M", fileName: "Llama-3.2-3B-Instruct-Q4_K_M.gguf", sizeBytes: 2_019_377_696 },
            { quant: "Q8_0", fileName: "Llama-3.2-3B-Instruct-Q8_0.gguf", sizeBytes: 3_421_899_456 },
            { quant: "F16", fileName: "Llama-3.2-3B-Instruct-f16.gguf", sizeBytes: 6_433_688_800 }
        ]
    },
    {
        id: "llama-3.1-8b",
        name: "Llama 3.1 8B Instruct",
        family: "Llama 3",
        parameters: "8B",
        repo: "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF",
        architecture: llama(32, 128),
        files: [
            { quant: "Q4_K_M", fileName: "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", sizeBytes: 4_920_739_232 },
            { quant: "Q8_0", fileName: "Meta-Llama-3.1-8B-Instruct-Q8_0.gguf", sizeBytes: 8_540_775_840 },
            { quant: "F16", fileName: "Meta-Llama-3.1-8B-Instruct-f16.gguf", sizeBytes: 16_068_890_848 }
        ]
    },
    {
        id: "qwen3-0.6b",
        name: "Qwen 3 0.6B",
        family: "Qwen 3",
        parameters: "0.6B",
        repo: "unsloth/Qwen3-0.6B-GGUF",
        architecture: qwen3(28),
        files: [
            { quant: "Q4_K_M", fileName: "Qwen3-0.6B-Q4_K_M.gguf", sizeBytes: 396_705_472 },
            { quant: "Q8_0", fileName: "Qwen3-0.6B-Q8_0.gguf", sizeBytes: 639_446_688 },
            { quant: "F16", fileName: "Qwen3-0.6B-F16.gguf", sizeBytes: 1_198_177_888 }
        ]
    },
    {
        id: "qwen3-1.7b",
        name: "Qwen 3 1.7B",
        family: "Qwen 3",
        parameters: "1.7B",
        repo: "unsloth/Qwen3-1.7B-GGUF",
        architecture: qwen3(28),
        files: [
            { quant: "Q4_K_M", fileName: "Qwen3-1.7B-Q4_K_M.gguf", sizeBytes: 1_107_409_472 },
            { quant: "Q8_0", fileName: "Qwen3-1.7B-Q8_0.gguf", sizeBytes: 1_834_426_016 },
            { quant: "F16", fileName: "Qwen3-1.7B-F16.gguf", sizeBytes: 3_447_349_856 }
        ]
    },
    {
        id: "qwen3-4b",
        name: "Qwen 3 4B",
        family: "Qwen 3",
        parameters: "4B",
        repo: "unsloth/Qwen3-4B-GGUF",
        architecture: qwen3(36),
        files: [
            { quant: "Q4_K_M", fileName: "Qwen3-4B-Q4_K_M.gguf", sizeBytes: 2_497_280_256 },
            { quant: "Q8_0", fileName: "Qwen3-4B-Q8_0.gguf", sizeBytes: 4_280_405_600 },
            { quant: "F16", fileName: "Qwen3-4B-F16.gguf", sizeBytes: 8_051_284_544 }
        ]
    },
    {
        id: "qwen3-8b",
        name: "Qwen 3 8B",
        family: "Qwen 3",
        parameters: "8B",
        repo: "unsloth/Qwen3-8B-GGUF",
        architecture: qwen3(36),
        files: [
            { quant: "Q4_K_M", fileName: "Qwen3-8B-Q4_K_M.gguf", sizeBytes: 5_027_783_488 },
            { quant: "Q8_0", fileName: "Qwen3-8B-Q8_0.gguf", sizeBytes: 8_709_519_456 },
            { quant: "F16", fileName: "Qwen3-8B-F16.gguf", sizeBytes: 16_388_044_896 }
        ]
    },
    {
        id: "gemma-3-1b",
        name: "Gemma 3 1B IT",
        family: "Gemma 3",
        parameters: "1B",
        repo: "unsloth/gemma-3-1b-it-GGUF",
        architecture: { numLayers: 26, numKvHeads: 1, headSize: 256, trainContextSize: 32_768 },
        files: [
            { quant: "Q4_K_M", fileName: "gemma-3-1b-it-Q4_K_M.gguf", sizeBytes: 806_058_272 },
            { quant: "Q8_0", fileName: "gemma-3-1b-it-Q8_0.gguf", sizeBytes: 1_069_306_400 },
            { quant: "F16", fileName: "gemma-3-1b-it-F16.gguf", sizeBytes: 2_006_616_608 }
        ]
    },
    {
        id: "gemma-3-4b",
        name: "Gemma 3 4B IT",
        family: "Gemma 3",
        parameters: "4B",
        repo: "unsloth/gemma-3-4b-it-GGUF",
        architecture: { numLayers: 34, numKvHeads: 4, headSize: 256, trainContextSize: 131_072 },
        files: [
            { quant: "Q4_K_M", fileName: "gemma-3-4b-it-Q4_K_M.gguf", sizeBytes: 2_489_757_856 },
            { quant: "Q8_0", fileName: "gemma-3-4b-it-Q8_0.gguf", sizeBytes: 4_130_401_664 },
            { quant: "F16", fileName: "gemma-3-4b-it-F16.gguf", sizeBytes: 7_767_803_776 }
        ]
    },
    {
        id: "phi-4-mini",
        name: "Phi-4 mini Instruct",
        family: "Phi-4",
        parameters: "3.8B",
        repo: "unsloth/Phi-4-mini-instruct-GGUF",
        architecture: { numLayers: 32, numKvHeads: 8, headSize: 128, trainContextSize: 131_072 },
        files: [
            { quant: "Q4_K_M", fileName: "Phi-4-mini-instruct-Q4_K_M.gguf", sizeBytes: 2_491_874_688 },
            { quant: "Q8_0", fileName: "Phi-4-mini-instruct-Q8_0.gguf", sizeBytes: 4_081_004_224 },
            { quant: "F16", fileName: "Phi-4-mini-instruct-F16.gguf", sizeBytes: 7_672_376_000 }
        ]
    },
    {
        id: "mistral-7b",
        name: "Mistral 7B Instruct v0.3",
        family: "Mistral",
        parameters: "7B",
        repo: "bartowski/Mistral-7B-Instruct-v0.3-GGUF",
        architecture: { numLayers: 32, numKvHeads: 8, headSize: 128, trainContextSize: 32_768 },
        files: [
            { quant: "Q4_K_M", fileName: "Mistral-7B-Instruct-v0.3-Q4_K_M.gguf", sizeBytes: 4_372_812_000 },
            { quant: "Q8_0", fileName: "Mistral-7B-Instruct-v0.3-Q8_0.gguf", sizeBytes: 7_702_565_056 },
            { quant: "F16", fileName: "Mistral-7B-Instruct-v0.3-f16.gguf", sizeBytes: 14_497_337_024 }
        ]
    }
];
