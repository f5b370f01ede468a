import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeGgufHeader } from "../../../../synthetic/gguf/GgufHeaderEncoder.js";
import { GgmlTensorType, type GgufMetadataEntry, type GgufTensorSpec, type GgufValue } from "../../../../engine/gguf/ggufTypes.js";
import { readGgufHeader } from "../../../../gguf/index.js";
import { readTaggedGgufMetadata, type TaggedGgufValue } from "../../../../synthetic/gguf/taggedGgufMetadata.js";
import { writeGgufFile } from "../../../../synthetic/gguf/writeGgufFile.js";

const metadata: GgufMetadataEntry[] = [
    { key: "general.architecture", value: { type: "string", value: "llama" } },
    { key: "a.u32", value: { type: "u32", value: 4_000_000_000 } },
    { key: "a.i32", value: { type: "i32", value: -7 } },
    { key: "a.u64", value: { type: "u64", value: 2n ** 40n } },
    { key: "a.f32", value: { type: "f32", value: 0.5 } },
    { key: "a.bool", value: { type: "bool", value: true } },
    { key: "a.strings", value: { type: "string[]", value: ["Ġ Ġ", "", "<|im_start|>", "é"] } },
    { key: "a.floats", value: { type: "f32[]", value: [1.5, -1000] } },
    { key: "a.ints", value: { type: "i32[]", value: [1, 3, 4] } },
    // llama.cpp's split.count is a u16; an empty array's tag comes from its element type, not its (absent) items.
    { key: "a.u16", value: { type: "u16", value: 3 } },
    { key: "a.no_strings", value: { type: "string[]", value: [] } }
];
/** A value with its arrays as plain arrays, so typed and untyped arrays compare by their items. */
function plain(value: TaggedGgufValue | GgufValue | undefined): unknown {
    if (value === undefined || value.type === "unsupported") {
        return value;
    }
    return { type: value.type, value: typeof value.value === "object" ? Array.from(value.value as ArrayLike<unknown>) : value.value };
}

const zeros = (name: string, dims: number[], type: GgmlTensorType): GgufTensorSpec => ({ name, dims, type, fill: (out) => out.fill(0) });
const tensors = [
    zeros("norm.weight", [64], GgmlTensorType.F32),
    zeros("q8.weight", [64, 3], GgmlTensorType.Q8_0),
    zeros("q4.weight", [32, 2], GgmlTensorType.Q4_0),
    zeros("q4k.weight", [256, 2], GgmlTensorType.Q4_K),
    zeros("half.weight", [3, 5], GgmlTensorType.F16)
];

describe("gguf/'s readGgufHeader on what synthetic/gguf writes, its values tagged again", () => {
    let directory: string;
    beforeAll(() => {
        directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-gguf-read-"));
    });
    afterAll(() => {
        fs.rmSync(directory, { recursive: true, force: true });
    });

    it("reads back every metadata value and the tensor table the writer wrote", () => {
        const filePath = path.join(directory, "all.gguf");
        const written = writeGgufFile(filePath, { metadata, tensors });
        const layout = encodeGgufHeader(metadata, tensors, 32);
        const header = readGgufHeader(filePath);
        const tagged = readTaggedGgufMetadata(filePath);
        expect(header.version).toBe(3);
        expect([...header.metadata.keys()]).toEqual(metadata.map(({ key }) => key));
        expect([...tagged.keys()]).toEqual(metadata.map(({ key }) => key));
        for (const { key, value } of metadata) {
            expect(plain(tagged.get(key)), key).toEqual(plain(value));
        }
        expect(header.dataOffset).toBe(layout.dataStart);
        expect(header.tensors.map(({ name, dims, ggmlType, fileOffset }) => ({ name, dims, type: ggmlType, offset: fileOffset }))).toEqual(
            tensors.map((tensor, index) => ({
                name: tensor.name,
                dims: tensor.dims,
                type: tensor.type,
                offset: layout.tensorRanges[index]!.start
            }))
        );
        // Q8_0: 34 bytes per 32, Q4_0: 18 per 32, Q4_K: 144 per 256
        const sizes = layout.tensorRanges.map(({ start, end }) => end - start);
        expect(sizes).toEqual([256, 6 * 34, 2 * 18, 2 * 144, 30]);
        expect(fs.statSync(filePath).size).toBe(written.numBytes);
    });

    it("refuses a file that is not GGUF, and one cut inside its header, with what to do", () => {
        const notGguf = path.join(directory, "not.gguf");
        fs.writeFileSync(notGguf, "GGML and more bytes");
        expect(() => readTaggedGgufMetadata(notGguf)).toThrow(
            expect.objectContaining({ code: "model_not_gguf", message: expect.stringMatching(/not a GGUF file/) })
        );

        const full = fs.readFileSync(writeGgufFile(path.join(directory, "cut-source.gguf"), { metadata, tensors }).path);
        const cut = path.join(directory, "cut.gguf");
        fs.writeFileSync(cut, full.subarray(0, 100));
        expect(() => readTaggedGgufMetadata(cut)).toThrow(
            expect.objectContaining({
                code: "model_unreadable",
                message: expect.stringMatching(/header could not be read .*the file has \d+ bytes left.*Download or copy it again/)
            })
        );
    });
});
