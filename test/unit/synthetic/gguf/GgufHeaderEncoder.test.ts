import { describe, expect, it } from "vitest";
import { encodeGgufHeader } from "../../../../synthetic/gguf/GgufHeaderEncoder.js";
import { GGUF_MAGIC, GgmlTensorType, type GgufTensorSpec } from "../../../../engine/gguf/ggufTypes.js";

const tensor = (name: string, dims: number[], type: GgmlTensorType): GgufTensorSpec => ({ name, dims, type, fill: (out) => out.fill(0) });

describe("encodeGgufHeader", () => {
    it("starts with the magic, version 3 and the counts", () => {
        const layout = encodeGgufHeader([{ key: "general.architecture", value: { type: "string", value: "llama" } }], [], 32);
        expect(layout.header.readUInt32LE(0)).toBe(GGUF_MAGIC);
        expect(layout.header.subarray(0, 4).toString("latin1")).toBe("GGUF");
        expect(layout.header.readUInt32LE(4)).toBe(3);
        expect(layout.header.readBigUInt64LE(8)).toBe(0n);
        expect(layout.header.readBigUInt64LE(16)).toBe(1n);
    });

    it("aligns the data section and every tensor to the alignment", () => {
        const layout = encodeGgufHeader(
            [],
            [
                tensor("a", [3], GgmlTensorType.F32), // 12 bytes
                tensor("b", [5, 2], GgmlTensorType.F16), // 20 bytes
                tensor("c", [1], GgmlTensorType.F32)
            ],
            32
        );
        expect(layout.dataStart % 32).toBe(0);
        expect(layout.dataStart).toBeGreaterThanOrEqual(layout.header.length);
        expect(layout.tensorRanges.map(({ start, end }) => [start - layout.dataStart, end - layout.dataStart])).toEqual([
            [0, 12],
            [32, 52],
            [64, 68]
        ]);
        expect(layout.totalBytes).toBe(layout.dataStart + 68);
    });

    it("refuses a metadata key given twice", () => {
        expect(() =>
            encodeGgufHeader(
                [
                    { key: "general.name", value: { type: "string", value: "a" } },
                    { key: "general.name", value: { type: "string", value: "b" } }
                ],
                [],
                32
            )
        ).toThrow(/general.name.*twice/);
    });

    it("refuses a quantized tensor whose rows are not whole blocks", () => {
        expect(() => encodeGgufHeader([], [tensor("q", [48, 2], GgmlTensorType.Q8_0)], 32)).toThrow(
            /tensor q: rows of 48 elements are not whole Q8_0 blocks of 32/
        );
        expect(() => encodeGgufHeader([], [tensor("k", [128, 2], GgmlTensorType.Q4_K)], 32)).toThrow(/whole Q4_K blocks of 256/);
    });
});
