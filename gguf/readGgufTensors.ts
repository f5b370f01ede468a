import type { BoundedFileReader } from "./BoundedFileReader.js";
import { GGML_TYPE_COUNT, lookUpGgmlType } from "./ggmlTypeSizes.js";
import { GgufHeaderProblem, formatCount } from "./GgufHeaderProblem.js";

export interface GgufTensorHeader {
    readonly name: string;
    /** ggml order: the row length first. */
    readonly dims: readonly number[];
    readonly ggmlType: number;
    /** From the start of the tensor data. */
    readonly offset: number;
    /** From the start of the file. */
    readonly fileOffset: number;
    readonly numBytes: number;
}

/** ggml's limits: GGML_MAX_DIMS, and GGML_MAX_NAME less its terminating zero. */
const MAX_DIMS = 4;
const MAX_NAME_BYTES = 63;
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The tensor list, then the checks that need all of it: the data section starts inside the file
 * and every tensor's bytes lie inside it. Each dimension count, dimension, type and offset is
 * checked as it is read, before the next.
 */
export function readGgufTensors(
    reader: BoundedFileReader,
    numTensors: number,
    alignment: number
): { readonly tensors: readonly GgufTensorHeader[]; readonly tensorListEndOffset: number; readonly dataOffset: number } {
    const read: { name: string; dims: number[]; ggmlType: number; offset: bigint; numBytes: bigint; what: string }[] = [];
    const names = new Set<string>();
    for (let index = 0; index < numTensors; index++) {
        const tensor = `tensor ${formatCount(index + 1)} of ${formatCount(numTensors)}`;
        const name = reader.string(() => `${tensor}'s name`);
        const what = `${tensor} (${name})`;
        if (Buffer.byteLength(name) > MAX_NAME_BYTES) {
            throw new GgufHeaderProblem(
                "unsupported",
                `${tensor}'s name has ${formatCount(Buffer.byteLength(name))} bytes; llama.cpp takes names of up to ${MAX_NAME_BYTES}. Open another model file`
            );
        }
        if (names.has(name)) {
            throw new GgufHeaderProblem("unreadable", `${tensor} repeats the name ${name}`);
        }
        names.add(name);
        const numDims = reader.u32(() => `${what}'s number of dimensions`);
        if (numDims > MAX_DIMS) {
            throw new GgufHeaderProblem(
                "unreadable",
                `${what} claims ${formatCount(numDims)} dimensions; ggml tensors have at most ${MAX_DIMS}`
            );
        }
        const dims: number[] = [];
        let numElements = 1n;
        for (let dim = 0; dim < numDims; dim++) {
            const size = reader.u64(() => `${what}'s dimension ${dim + 1}`);
            if (size > BigInt(Number.MAX_SAFE_INTEGER)) {
                throw new GgufHeaderProblem("unreadable", `${what} claims ${formatCount(size)} elements in dimension ${dim + 1}`);
            }
            dims.push(Number(size));
            numElements *= size;
        }
        if (numElements > INT64_MAX) {
            throw new GgufHeaderProblem(
                "unreadable",
                `${what} claims ${dims.map(formatCount).join(" × ")} elements, more than a 64-bit count holds`
            );
        }
        const ggmlType = reader.u32(() => `${what}'s type`);
        const type = lookUpGgmlType(ggmlType);
        if (type.kind === "retired") {
            throw new GgufHeaderProblem(
                "unsupported",
                `${what} has ggml type ${ggmlType} (${type.name}), which llama.cpp no longer loads from a file. Download the model again in a current quantisation`
            );
        }
        if (type.kind === "unknown") {
            throw new GgufHeaderProblem(
                "unsupported",
                `${what} has ggml type ${formatCount(ggmlType)}, which this llama.cpp does not know (it knows 0 to ${GGML_TYPE_COUNT - 1}): the file is damaged, or needs a newer Kvault`
            );
        }
        const { blockElements, blockBytes, name: typeName } = type.size;
        const rowLength = dims[0] ?? 1;
        if (rowLength % blockElements !== 0) {
            throw new GgufHeaderProblem(
                "unreadable",
                `${what} has rows of ${formatCount(rowLength)} elements, not a multiple of ${typeName}'s block of ${blockElements}`
            );
        }
        const offset = reader.u64(() => `${what}'s data offset`);
        if (offset % BigInt(alignment) !== 0n) {
            throw new GgufHeaderProblem(
                "unreadable",
                `${what}'s data offset ${formatCount(offset)} is not a multiple of the alignment ${alignment}`
            );
        }
        read.push({ name, dims, ggmlType, offset, numBytes: (numElements / BigInt(blockElements)) * BigInt(blockBytes), what });
    }
    const tensorListEndOffset = reader.offset;
    const dataOffset = Math.ceil(tensorListEndOffset / alignment) * alignment;
    const fileBytes = BigInt(reader.fileBytes);
    if (numTensors > 0 && dataOffset > reader.fileBytes) {
        throw new GgufHeaderProblem(
            "unreadable",
            `its tensor data would start at byte ${formatCount(dataOffset)}; the file has ${formatCount(reader.fileBytes)} bytes`
        );
    }
    const tensors = read.map(({ name, dims, ggmlType, offset, numBytes, what }): GgufTensorHeader => {
        const start = BigInt(dataOffset) + offset;
        if (start + numBytes > fileBytes) {
            throw new GgufHeaderProblem(
                "unreadable",
                `${what} takes bytes ${formatCount(start)} to ${formatCount(start + numBytes)} of the file; the file has ${formatCount(fileBytes)} bytes`
            );
        }
        // Inside the file: numbers from here.
        return { name, dims, ggmlType, offset: Number(offset), fileOffset: Number(start), numBytes: Number(numBytes) };
    });
    return { tensors, tensorListEndOffset, dataOffset };
}
