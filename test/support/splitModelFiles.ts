// A generated model split as llama.cpp's gguf-split splits one: the first part holds the metadata
// and the first tensors, every next part only `split.*` and its own tensors, named
// `<stem>-00001-of-0000N.gguf`; and the same model's file cut into binary parts
// (`<name>.gguf.part1ofN`), which only joined make a GGUF.
import fs from "node:fs";
import path from "node:path";
import type { GgufMetadataEntry } from "../../engine/gguf/ggufTypes.js";
import { writeGgufFile } from "../../synthetic/gguf/writeGgufFile.js";
import { modelPresets } from "../../synthetic/model/modelPresets.js";
import { planSyntheticModel } from "../../synthetic/model/syntheticModel.js";

/** The tiny model written as `numParts` split parts in `directory`; their paths, in order. */
export function writeSplitModel(directory: string, stem: string, numParts: number): string[] {
    const plan = planSyntheticModel(modelPresets.tiny);
    const perPart = Math.ceil(plan.tensors.length / numParts);
    fs.mkdirSync(directory, { recursive: true });
    return Array.from({ length: numParts }, (_, index) => {
        // llama.cpp's LLM_KV_SPLIT_NO, LLM_KV_SPLIT_COUNT (u16) and LLM_KV_SPLIT_TENSORS_COUNT (i32).
        const split: GgufMetadataEntry[] = [
            { key: "split.no", value: { type: "u16", value: index } },
            { key: "split.count", value: { type: "u16", value: numParts } },
            { key: "split.tensors.count", value: { type: "i32", value: plan.tensors.length } }
        ];
        const filePath = path.join(directory, `${stem}-${String(index + 1).padStart(5, "0")}-of-${String(numParts).padStart(5, "0")}.gguf`);
        writeGgufFile(filePath, {
            metadata: index === 0 ? [...plan.metadata, ...split] : split,
            tensors: plan.tensors.slice(index * perPart, (index + 1) * perPart)
        });
        return filePath;
    });
}

/** `body` cut into `numParts` pieces of about the same size, in order. */
export function binaryParts(body: Buffer, numParts: number): Buffer[] {
    const size = Math.ceil(body.length / numParts);
    return Array.from({ length: numParts }, (_, index) => body.subarray(index * size, (index + 1) * size));
}
