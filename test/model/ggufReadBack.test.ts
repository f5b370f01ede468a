import crypto from "node:crypto";
import fs from "node:fs";
import { readGgufFileInfo, type GgufFileInfo } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { encodeGgufHeader } from "../../synthetic/gguf/GgufHeaderEncoder.js";
import { float32ToFloat16Bits } from "../../synthetic/gguf/float16.js";
import {
    GGUF_DEFAULT_ALIGNMENT,
    GgmlTensorType,
    numTensorElements,
    type GgufTensorSpec,
    type GgufValue
} from "../../engine/gguf/ggufTypes.js";
import { modelPresets, type ModelPresetName } from "../../synthetic/model/modelPresets.js";
import { planSyntheticModel } from "../../synthetic/model/syntheticModel.js";
import { generatedModelPath } from "../support/generatedModels.js";

/** node-llama-cpp's reader nests keys by their dots: "llama.attention.head_count" → metadata.llama.attention.head_count. */
function lookUp(metadata: GgufFileInfo["metadata"], key: string): unknown {
    return key.split(".").reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], metadata);
}

function expectedValue(value: GgufValue): unknown {
    switch (value.type) {
        case "u64":
            return value.value;
        case "f32":
            return Math.fround(value.value);
        case "f32[]":
            return Array.from(value.value, (item) => Math.fround(item));
        case "i32[]":
            return Array.from(value.value);
        default:
            return value.value;
    }
}

/** The bytes the writer must have produced for a tensor, generated again from its spec. */
function expectedTensorDigest(tensor: GgufTensorSpec): string {
    const hash = crypto.createHash("sha256");
    const numElements = numTensorElements(tensor.dims);
    const chunk = 1 << 20;
    const halves = new Uint16Array(chunk);
    for (let start = 0; start < numElements; start += chunk) {
        const values = new Float32Array(Math.min(chunk, numElements - start));
        tensor.fill(values, start);
        if (tensor.type === GgmlTensorType.F32) {
            hash.update(new Uint8Array(values.buffer));
        } else {
            for (let i = 0; i < values.length; i++) {
                halves[i] = float32ToFloat16Bits(values[i]!);
            }
            hash.update(new Uint8Array(halves.buffer, 0, values.length * 2));
        }
    }
    return hash.digest("hex");
}

function fileDigest(fd: number, start: number, end: number): string {
    const hash = crypto.createHash("sha256");
    const buffer = Buffer.alloc(1 << 22);
    for (let position = start; position < end; ) {
        const numRead = fs.readSync(fd, buffer, 0, Math.min(buffer.length, end - position), position);
        expect(numRead).toBeGreaterThan(0);
        hash.update(buffer.subarray(0, numRead));
        position += numRead;
    }
    return hash.digest("hex");
}

describe.each(["tiny", "small"] satisfies ModelPresetName[])(
    "a generated %s model read back with node-llama-cpp's GGUF reader",
    (preset) => {
        const plan = planSyntheticModel(modelPresets[preset]);

        it("has every metadata key with the value written, and nothing else", async () => {
            const info = await readGgufFileInfo(generatedModelPath(preset), { readTensorInfo: false, logWarnings: false });
            expect(info.version).toBe(3);
            for (const { key, value } of plan.metadata) {
                expect(lookUp(info.metadata, key), key).toEqual(expectedValue(value));
            }

            const countLeaves = (node: unknown): number =>
                typeof node === "object" && node != null && !Array.isArray(node)
                    ? Object.values(node).reduce<number>((sum, child) => sum + countLeaves(child), 0)
                    : 1;
            expect(countLeaves(info.metadata)).toBe(plan.metadata.length);
        });

        it("has every tensor with its name, shape, type, offset and exact bytes", async () => {
            const modelPath = generatedModelPath(preset);
            const info = await readGgufFileInfo(modelPath, { readTensorInfo: true, logWarnings: false });
            const layout = encodeGgufHeader(plan.metadata, plan.tensors, GGUF_DEFAULT_ALIGNMENT);
            expect(info.tensorInfo).toHaveLength(plan.tensors.length);
            expect(fs.statSync(modelPath).size).toBe(layout.totalBytes);

            const fd = fs.openSync(modelPath, "r");
            try {
                plan.tensors.forEach((tensor, index) => {
                    const read = info.tensorInfo![index]!;
                    const range = layout.tensorRanges[index]!;
                    expect(read.name).toBe(tensor.name);
                    expect(read.dimensions.map(Number)).toEqual(tensor.dims);
                    expect(read.ggmlType).toBe(tensor.type);
                    expect(Number(read.fileOffset)).toBe(range.start);
                    expect(fileDigest(fd, range.start, range.end), tensor.name).toBe(expectedTensorDigest(tensor));
                });
            } finally {
                fs.closeSync(fd);
            }
        }, 120_000);
    }
);
