import fs from "node:fs";
import path from "node:path";
import { getLlama, LlamaLogLevel, readGgufFileInfo, type GgufFileInfo } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { lookUpGgmlType } from "../../../../gguf/ggmlTypeSizes.js";
import { knownGgmlTypeIds } from "../../../support/knownGgmlTypeIds.js";
import { readGgufHeader, type GgufHeader, type GgufMetadataValue } from "../../../../gguf/readGgufHeader.js";
import { llamaCppAsset } from "../../../../synthetic/model/llamaCppAssets.js";
import { ensureGeneratedModel } from "../../../support/generatedModels.js";
import { ensureChunkedModel } from "../../../support/modelFileServer.js";

// Kvault's reader must read real files exactly as node-llama-cpp's does: the generated models, and
// llama.cpp's vocabulary files (SPM, BPE, WPM and UGM tokenizers; up to 260k tokens), taken from the
// llama.cpp source node-llama-cpp ships (its git bundle, extracted once into .cache/).
const VOCAB_FILES = [
    "ggml-vocab-aquila.gguf",
    "ggml-vocab-baichuan.gguf",
    "ggml-vocab-bert-bge.gguf",
    "ggml-vocab-command-r.gguf",
    "ggml-vocab-deepseek-coder.gguf",
    "ggml-vocab-deepseek-llm.gguf",
    "ggml-vocab-falcon.gguf",
    "ggml-vocab-gemma-4.gguf",
    "ggml-vocab-gpt-2.gguf",
    "ggml-vocab-gpt-neox.gguf",
    "ggml-vocab-llama-bpe.gguf",
    "ggml-vocab-llama-spm.gguf",
    "ggml-vocab-mpt.gguf",
    "ggml-vocab-nomic-bert-moe.gguf",
    "ggml-vocab-phi-3.gguf",
    "ggml-vocab-qwen2.gguf",
    "ggml-vocab-qwen35.gguf",
    "ggml-vocab-refact.gguf",
    "ggml-vocab-starcoder.gguf"
] as const;

function vocabFiles(): string[] {
    return VOCAB_FILES.map((name) => llamaCppAsset(`models/${name}`));
}

/** node-llama-cpp's nested metadata, flattened back into GGUF's dotted keys. */
function flatten(nested: object, prefix = "", into = new Map<string, unknown>()): Map<string, unknown> {
    for (const [key, value] of Object.entries(nested)) {
        const dotted = prefix === "" ? key : `${prefix}.${key}`;
        if (typeof value === "object" && value !== null && !Array.isArray(value)) {
            flatten(value as object, dotted, into);
        } else {
            into.set(dotted, value);
        }
    }
    return into;
}

/** Kvault's values in node-llama-cpp's shapes: typed arrays as plain arrays. */
function plain(value: GgufMetadataValue): unknown {
    return ArrayBuffer.isView(value) ? Array.from(value as ArrayLike<number | bigint>) : value;
}

function expectSameAsNodeLlamaCpp(header: GgufHeader, info: GgufFileInfo): void {
    expect(header.version).toBe(info.version);
    expect(header.tensors.length).toBe(Number(info.tensorCount));
    expect(header.metadataEndOffset).toBe(info.metadataSize);
    expect(header.dataOffset).toBe(info.infoEndOffset);
    expect(header.tensorListEndOffset - header.metadataEndOffset).toBe(info.tensorInfoSize);
    const ours = new Map([...header.metadata].map(([key, value]) => [key, plain(value)]));
    expect(ours).toEqual(flatten(info.metadata));
    expect(header.tensors.map(({ name, dims, ggmlType, offset, fileOffset }) => ({ name, dims, ggmlType, offset, fileOffset }))).toEqual(
        (info.tensorInfo ?? []).map(({ name, dimensions, ggmlType, offset, fileOffset }) => ({
            name,
            dims: dimensions,
            ggmlType,
            offset,
            fileOffset
        }))
    );
}

describe("readGgufHeader reads real GGUF files as node-llama-cpp does", () => {
    it.each([
        ["tiny", () => ensureGeneratedModel("tiny")],
        ["small", () => ensureGeneratedModel("small")],
        ["tiny with 40 layers", () => ensureChunkedModel()]
    ])("the generated %s model: metadata, tensors, offsets", async (_name, modelPath) => {
        const filePath = modelPath();
        const header = readGgufHeader(filePath);
        expectSameAsNodeLlamaCpp(header, await readGgufFileInfo(filePath, { readTensorInfo: true, logWarnings: false }));
        expect(header.tensors.length).toBeGreaterThan(0);
        const last = header.tensors.at(-1)!;
        expect(last.fileOffset + last.numBytes).toBe(fs.statSync(filePath).size);
    });

    it("llama.cpp's vocabulary files, every one", async () => {
        const files = vocabFiles();
        expect(files.length, "llama.cpp's ggml-vocab-*.gguf files").toBe(VOCAB_FILES.length);
        for (const filePath of files) {
            const header = readGgufHeader(filePath);
            const info = await readGgufFileInfo(filePath, { readTensorInfo: true, logWarnings: false });
            expectSameAsNodeLlamaCpp(header, info);
            expect((header.metadata.get("tokenizer.ggml.tokens") as readonly string[]).length, path.basename(filePath)).toBeGreaterThan(
                1000
            );
        }
    }, 300_000);

    it("knows the block sizes of every ggml type as this llama.cpp does", async () => {
        const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });
        try {
            // Not public API: the binding GgufInsights uses to size tensors.
            const bindings = (
                llama as unknown as {
                    _bindings: {
                        getBlockSizeForGgmlType(type: number): number | undefined;
                        getTypeSizeForGgmlType(type: number): number | undefined;
                    };
                }
            )._bindings;
            for (let type = 0; type < 48; type++) {
                const lookup = lookUpGgmlType(type);
                const native = { blockElements: bindings.getBlockSizeForGgmlType(type), blockBytes: bindings.getTypeSizeForGgmlType(type) };
                if (lookup.kind === "known") {
                    expect({ type, ...native }).toEqual({
                        type,
                        blockElements: lookup.size.blockElements,
                        blockBytes: lookup.size.blockBytes
                    });
                } else {
                    // Retired ids have no size; unknown ones no entry at all.
                    expect([0, undefined], `ggml type ${type}`).toContain(native.blockElements);
                }
            }
            expect(knownGgmlTypeIds.length).toBe(35);
        } finally {
            await llama.dispose();
        }
    });
});
