import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GgmlTensorType } from "../../../engine/gguf/ggufTypes.js";
import { writeGgufFile } from "../../../synthetic/gguf/writeGgufFile.js";
import { readGgufHeader, type GgufHeader } from "../../../gguf/readGgufHeader.js";
import { ggufStart, T, type RawGguf } from "./rawGguf.js";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-gguf-header-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

let numFiles = 0;
function fileOf(bytes: Buffer | RawGguf): string {
    const filePath = path.join(scratch, `case-${numFiles++}.gguf`);
    fs.writeFileSync(filePath, Buffer.isBuffer(bytes) ? bytes : bytes.build());
    return filePath;
}

function refusal(bytes: Buffer | RawGguf, limits?: Parameters<typeof readGgufHeader>[1]): { code: string; message: string; path: string } {
    const filePath = fileOf(bytes);
    try {
        readGgufHeader(filePath, limits);
    } catch (error) {
        expect(error).toBeInstanceOf(Error);
        return { ...(error as { code: string; message: string }), message: (error as Error).message, path: filePath };
    }
    throw new Error(`${filePath} was read without an error`);
}

const unreadable = (detail: string, filePath: string): string =>
    `${filePath} starts like a GGUF file, but its header could not be read (${detail}): the file is probably truncated or damaged. Download or copy it again.`;

describe("readGgufHeader refuses the files that crash node-llama-cpp's reader, before allocating", () => {
    it("an array claiming 2^40 elements (69 bytes of file): model_unreadable with the numbers", () => {
        const bytes = ggufStart({ entries: 1 }).entry("tokenizer.ggml.tokens", T.array, (raw) => raw.u32(T.u32).u64(2n ** 40n));
        const error = refusal(bytes);
        expect(bytes.build().length).toBe(69);
        expect(error.code).toBe("model_unreadable");
        expect(error.message).toBe(
            unreadable(
                "metadata entry 1 of 1 (tokenizer.ggml.tokens) claims 1,099,511,627,776 elements of 4 bytes; the file has 0 bytes left",
                error.path
            )
        );
    });

    it("a header claiming 2^62 metadata entries (24 bytes of file)", () => {
        const error = refusal(ggufStart({ entries: 2n ** 62n }));
        expect(error.code).toBe("model_unreadable");
        expect(error.message).toBe(
            unreadable(
                "its header claims 4,611,686,018,427,387,904 metadata entries of at least 14 bytes each; the file has 0 bytes left",
                error.path
            )
        );
    });

    it("2^64 − 1 tensors, a key of 2^63 bytes, a string array of 2^40 strings", () => {
        expect(refusal(ggufStart({ tensors: 2n ** 64n - 1n })).message).toContain(
            "its header claims 18,446,744,073,709,551,615 tensors of at least 24 bytes each; the file has 0 bytes left"
        );
        expect(
            refusal(
                ggufStart({ entries: 1 })
                    .string("k", 2n ** 63n)
                    .bytes(Buffer.alloc(8))
            ).message
        ).toContain("metadata entry 1 of 1's key claims 9,223,372,036,854,775,808 bytes; the file has 9 bytes left");
        const strings = refusal(
            ggufStart({ entries: 1 }).entry("v", T.array, (raw) =>
                raw
                    .u32(T.string)
                    .u64(2n ** 40n)
                    .string("a")
            )
        );
        expect(strings.message).toContain(
            "metadata entry 1 of 1 (v) claims 1,099,511,627,776 elements of strings of at least 8 bytes; the file has 9 bytes left"
        );
    });

    it("a string value claiming more bytes than follow", () => {
        const error = refusal(ggufStart({ entries: 1 }).entry("general.name", T.string, (raw) => raw.string("tiny", 1_000)));
        expect(error.code).toBe("model_unreadable");
        expect(error.message).toContain("metadata entry 1 of 1 (general.name) claims 1,000 bytes; the file has 4 bytes left");
    });

    it("arrays of arrays: model_unsupported, whatever their depth", () => {
        const nested = refusal(
            ggufStart({ entries: 1 }).entry("x", T.array, (raw) => raw.u32(T.array).u64(1).u32(T.array).u64(1).u32(T.u8).u64(1))
        );
        expect(nested.code).toBe("model_unsupported");
        expect(nested.message).toBe(
            `${nested.path} is a GGUF file Kvault cannot use: metadata entry 1 of 1 (x) is an array of arrays, which llama.cpp does not read (it reads arrays of numbers, booleans and strings). Open another model file.`
        );
    });

    it("value types no GGUF defines, in a value and in an array", () => {
        expect(refusal(ggufStart({ entries: 1 }).entry("x", 13, (raw) => raw.u32(0))).message).toContain(
            "metadata entry 1 of 1 (x) has value type 13, which no GGUF version defines (0 to 12)"
        );
        expect(refusal(ggufStart({ entries: 1 }).entry("x", T.array, (raw) => raw.u32(4_000_000_000).u64(1))).message).toContain(
            "metadata entry 1 of 1 (x)'s elements has value type 4,000,000,000, which no GGUF version defines (0 to 12)"
        );
    });

    it("an empty key and a key given twice", () => {
        expect(refusal(ggufStart({ entries: 1 }).entry("", T.u8, (raw) => raw.bytes(Buffer.of(1, 0)))).message).toContain(
            "metadata entry 1 of 1 has an empty key"
        );
        const twice = ggufStart({ entries: 2 })
            .entry("general.name", T.string, (raw) => raw.string("a"))
            .entry("general.name", T.string, (raw) => raw.string("b"));
        expect(refusal(twice).message).toContain("metadata entry 2 of 2 repeats the key general.name");
    });

    it("versions llama.cpp does not read", () => {
        expect(refusal(ggufStart({ version: 1 }))).toMatchObject({
            code: "model_unsupported",
            message: expect.stringContaining("GGUF version 1")
        });
        expect(refusal(ggufStart({ version: 4 })).message).toContain("it is GGUF version 4, and this Kvault reads versions 2 and 3");
        expect(refusal(ggufStart({ version: 0x03000000 })).message).toContain("which is version 3 written big-endian");
        expect(refusal(ggufStart({ version: 0 }))).toMatchObject({
            code: "model_unreadable",
            message: expect.stringContaining("its version is 0")
        });
    });

    it("an alignment of the wrong type or not a power of 2", () => {
        expect(refusal(ggufStart({ entries: 1 }).entry("general.alignment", T.u64, (raw) => raw.u64(32))).message).toContain(
            "its general.alignment is a uint64; GGUF requires a uint32"
        );
        expect(refusal(ggufStart({ entries: 1 }).entry("general.alignment", T.u32, (raw) => raw.u32(48))).message).toContain(
            "its general.alignment is 48, not a power of 2"
        );
    });
});

describe("readGgufHeader checks each tensor's entry against ggml's rules and the file's size", () => {
    const oneTensor = (dims: readonly (number | bigint)[], ggmlType: number, offset: number | bigint = 0, numDims?: number): RawGguf =>
        ggufStart({ tensors: 1 }).tensor("blk.0.attn_q.weight", dims, ggmlType, offset, numDims);

    it("more than 4 dimensions, a dimension past 2^53, an element count past 2^63", () => {
        expect(refusal(oneTensor([1, 1, 1, 1, 1], 0)).message).toContain(
            "tensor 1 of 1 (blk.0.attn_q.weight) claims 5 dimensions; ggml tensors have at most 4"
        );
        expect(refusal(oneTensor([1, 4_000_000_000], 0, 0, 4_000_000_000)).message).toContain("claims 4,000,000,000 dimensions");
        expect(refusal(oneTensor([2n ** 60n], 0)).message).toContain("claims 1,152,921,504,606,846,976 elements in dimension 1");
        expect(refusal(oneTensor([2 ** 40, 2 ** 40], 0)).message).toContain(
            "claims 1,099,511,627,776 × 1,099,511,627,776 elements, more than a 64-bit count holds"
        );
    });

    it("ggml types it does not know, or no longer loads", () => {
        const unknown = refusal(oneTensor([32], 99));
        expect(unknown.code).toBe("model_unsupported");
        expect(unknown.message).toContain(
            "tensor 1 of 1 (blk.0.attn_q.weight) has ggml type 99, which this llama.cpp does not know (it knows 0 to 42)"
        );
        expect(refusal(oneTensor([32], 31)).message).toContain("has ggml type 31 (Q4_0_4_4), which llama.cpp no longer loads from a file");
    });

    it("a row that is not a whole number of blocks, an offset off the alignment", () => {
        expect(refusal(oneTensor([100], 12)).message).toContain("has rows of 100 elements, not a multiple of Q4_K's block of 256");
        expect(refusal(oneTensor([8], 0, 4)).message).toContain(
            "blk.0.attn_q.weight)'s data offset 4 is not a multiple of the alignment 32"
        );
    });

    it("tensor data past the end of the file, and a data section that starts past it", () => {
        const past = oneTensor([1024, 1024], 1).padTo(32).bytes(Buffer.alloc(100));
        const error = refusal(past);
        expect(error.code).toBe("model_unreadable");
        expect(error.message).toMatch(
            /tensor 1 of 1 \(blk\.0\.attn_q\.weight\) takes bytes 96 to 2,097,248 of the file; the file has 196 bytes/
        );
        expect(refusal(oneTensor([8], 0)).message).toContain("its tensor data would start at byte 96; the file has 75 bytes");
    });

    it("a name given twice, or longer than llama.cpp takes", () => {
        const twice = ggufStart({ tensors: 2 }).tensor("a", [8], 0, 0).tensor("a", [8], 0, 32);
        expect(refusal(twice).message).toContain("tensor 2 of 2 repeats the name a");
        const long = refusal(ggufStart({ tensors: 1 }).tensor("n".repeat(64), [8], 0, 0));
        expect(long.code).toBe("model_unsupported");
        expect(long.message).toContain("tensor 1 of 1's name has 64 bytes; llama.cpp takes names of up to 63");
    });

    it("a header longer than the limit: model_unsupported, nothing read past it", () => {
        const big = ggufStart({ entries: 1 }).entry("tokenizer.ggml.scores", T.array, (raw) =>
            raw.u32(T.f32).u64(1000).bytes(Buffer.alloc(4000))
        );
        const error = refusal(big, { maxHeaderBytes: 1024, chunkBytes: 256 });
        expect(error.code).toBe("model_unsupported");
        expect(error.message).toContain(
            "metadata entry 1 of 1 (tokenizer.ggml.scores) would take the header past 1,024 bytes, the most Kvault reads of a GGUF header"
        );
    });
});

describe("readGgufHeader on files that are not GGUF", () => {
    it("says what they start with, or that they are empty, missing or a directory", () => {
        expect(refusal(Buffer.from('{\n  "name"'))).toMatchObject({
            code: "model_not_gguf",
            message: expect.stringContaining('(it starts with "{\\n  "; a GGUF file starts with "GGUF")')
        });
        expect(refusal(Buffer.from("GG"))).toMatchObject({
            code: "model_not_gguf",
            message: expect.stringContaining('it starts with "GG"')
        });
        expect(refusal(Buffer.alloc(0))).toMatchObject({ code: "model_not_gguf", message: expect.stringContaining("it is empty") });
        expect(refusal(Buffer.from("GGUF"))).toMatchObject({
            code: "model_unreadable",
            message: expect.stringContaining("the version needs 4 bytes; the file has 0 bytes left")
        });
        expect(() => readGgufHeader(path.join(scratch, "missing.gguf"))).toThrow(/Cannot open the model .*missing\.gguf: no such file/);
        expect(() => readGgufHeader(scratch)).toThrow(/is not a file \(it is a directory or a device\)/);
    });
});

describe("readGgufHeader reads well-formed files whole", () => {
    function everyType(): RawGguf {
        return ggufStart({ tensors: 2, entries: 15 })
            .entry("u8", T.u8, (raw) => raw.bytes(Buffer.of(200)))
            .entry("i8", T.i8, (raw) => raw.bytes(Buffer.of(0xff)))
            .entry("u16", T.u16, (raw) => raw.bytes(Buffer.of(0x34, 0x12)))
            .entry("i16", T.i16, (raw) => raw.bytes(Buffer.of(0xfe, 0xff)))
            .entry("u32", T.u32, (raw) => raw.u32(4_000_000_000))
            .entry("i32", T.i32, (raw) => raw.u32(-5))
            .entry("f32", T.f32, (raw) => raw.bytes(Buffer.from(new Float32Array([1.5]).buffer)))
            .entry("bool", T.bool, (raw) => raw.bytes(Buffer.of(1)))
            .entry("string", T.string, (raw) => raw.string("héllo"))
            .entry("u64", T.u64, (raw) => raw.u64(2n ** 60n))
            .entry("i64", T.i64, (raw) => raw.u64(-3n))
            .entry("f64", T.f64, (raw) => raw.bytes(Buffer.from(new Float64Array([0.1]).buffer)))
            .entry("tokens", T.array, (raw) => raw.u32(T.string).u64(3).string("a").string("").string("ü"))
            .entry("scores", T.array, (raw) =>
                raw
                    .u32(T.f32)
                    .u64(2)
                    .bytes(Buffer.from(new Float32Array([0.5, -2]).buffer))
            )
            .entry("general.alignment", T.u32, (raw) => raw.u32(64))
            .tensor("a", [64, 2], 8, 0) // Q8_0: 2 blocks of 34 bytes
            .tensor("b", [3], 0, 128) // F32
            .padTo(64)
            .bytes(Buffer.alloc(140));
    }

    it("every value type, the alignment, the tensors and where their data lies", () => {
        const header = readGgufHeader(fileOf(everyType()));
        expect(Object.fromEntries(header.metadata)).toEqual({
            u8: 200,
            i8: -1,
            u16: 0x1234,
            i16: -2,
            u32: 4_000_000_000,
            i32: -5,
            f32: 1.5,
            bool: true,
            string: "héllo",
            u64: 2n ** 60n,
            i64: -3n,
            f64: 0.1,
            tokens: ["a", "", "ü"],
            scores: new Float32Array([0.5, -2]),
            "general.alignment": 64
        });
        expect(header.alignment).toBe(64);
        expect(header.dataOffset % 64).toBe(0);
        expect(header.tensors).toEqual([
            { name: "a", dims: [64, 2], ggmlType: 8, offset: 0, fileOffset: header.dataOffset, numBytes: 136 },
            { name: "b", dims: [3], ggmlType: 0, offset: 128, fileOffset: header.dataOffset + 128, numBytes: 12 }
        ]);
        expect(header.fileBytes).toBe(header.dataOffset + 140);
    });

    it("the same through windows of 1, 7 and 64 KiB bytes, across every boundary", () => {
        const filePath = fileOf(everyType());
        const reads = [1, 7, 64 * 1024].map((chunkBytes) => readGgufHeader(filePath, { maxHeaderBytes: 1 << 20, chunkBytes }));
        for (const read of reads.slice(1)) {
            expect(read).toEqual(reads[0]);
        }
    });

    it("a file synthetic/gguf wrote: its metadata and tensor layout", () => {
        const filePath = path.join(scratch, "written.gguf");
        const written = writeGgufFile(filePath, {
            metadata: [
                { key: "general.architecture", value: { type: "string", value: "llama" } },
                { key: "llama.block_count", value: { type: "u32", value: 2 } },
                { key: "tokenizer.ggml.tokens", value: { type: "string[]", value: ["<s>", "</s>", "a"] } },
                { key: "tokenizer.ggml.token_type", value: { type: "i32[]", value: [3, 3, 1] } }
            ],
            tensors: [
                { name: "token_embd.weight", dims: [8, 3], type: GgmlTensorType.F16, fill: (out) => out.fill(0.5) },
                { name: "output_norm.weight", dims: [8], type: GgmlTensorType.F32, fill: (out) => out.fill(1) }
            ]
        });
        const header: GgufHeader = readGgufHeader(filePath);
        expect(header.version).toBe(3);
        expect(header.metadata.get("tokenizer.ggml.tokens")).toEqual(["<s>", "</s>", "a"]);
        expect(header.metadata.get("tokenizer.ggml.token_type")).toEqual(new Int32Array([3, 3, 1]));
        expect(header.tensors.map((tensor) => [tensor.name, tensor.numBytes])).toEqual([
            ["token_embd.weight", 48],
            ["output_norm.weight", 32]
        ]);
        expect(header.tensors.at(-1)!.fileOffset + 32).toBe(written.numBytes);
    });
});
