import fs from "node:fs";
import path from "node:path";
import { encodeGgufHeader } from "./GgufHeaderEncoder.js";
import {
    GGUF_DEFAULT_ALIGNMENT,
    numTensorElements,
    tensorDataBytes,
    type GgufMetadataEntry,
    type GgufTensorSpec
} from "../../engine/gguf/ggufTypes.js";
import { encodeTensorValues } from "./tensorEncoding.js";

/**
 * Elements generated and written per step: 4 MiB of F32 scratch, whatever the tensor's size. A
 * multiple of every block size (256 at most), so a chunk is whole blocks when rows are.
 */
const CHUNK_ELEMENTS = 1 << 20;

export interface WriteGgufOptions {
    readonly metadata: readonly GgufMetadataEntry[];
    readonly tensors: readonly GgufTensorSpec[];
    readonly alignment?: number;
}

export interface WrittenGguf {
    readonly path: string;
    readonly numBytes: number;
}

/**
 * Writes a GGUF v3 file, streaming tensor data chunk by chunk. The file appears at `filePath`
 * only when complete: data goes to a temporary file beside it that is renamed at the end and
 * removed on any failure, so an interrupted or failed write leaves nothing behind.
 */
export function writeGgufFile(filePath: string, { metadata, tensors, alignment = GGUF_DEFAULT_ALIGNMENT }: WriteGgufOptions): WrittenGguf {
    const layout = encodeGgufHeader(metadata, tensors, alignment);
    const tempPath = path.join(path.dirname(filePath), `.${path.basename(filePath)}.${process.pid}.partial`);

    const fd = fs.openSync(tempPath, "wx", 0o644);
    let complete = false;
    try {
        let position = 0;
        const write = (bytes: Uint8Array): void => {
            let written = 0;
            while (written < bytes.length) {
                written += fs.writeSync(fd, bytes, written, bytes.length - written, position + written);
            }
            position += bytes.length;
        };
        const padTo = (offset: number): void => {
            if (offset > position) {
                write(new Uint8Array(offset - position));
            }
        };

        write(layout.header);
        const scratch = new Float32Array(CHUNK_ELEMENTS);
        const encoded = new Uint8Array(CHUNK_ELEMENTS * 4);
        tensors.forEach((tensor, index) => {
            const range = layout.tensorRanges[index]!;
            padTo(range.start);
            const numElements = numTensorElements(tensor.dims);
            for (let start = 0; start < numElements; start += CHUNK_ELEMENTS) {
                const count = Math.min(CHUNK_ELEMENTS, numElements - start);
                const values = scratch.subarray(0, count);
                tensor.fill(values, start);
                const bytes = encoded.subarray(0, tensorDataBytes(tensor.type, count));
                encodeTensorValues(tensor.type, values, bytes);
                write(bytes);
            }
        });
        padTo(layout.totalBytes);
        fs.fsyncSync(fd);
        complete = true;
    } finally {
        fs.closeSync(fd);
        if (!complete) {
            fs.rmSync(tempPath, { force: true });
        }
    }
    try {
        fs.renameSync(tempPath, filePath);
    } catch (error) {
        fs.rmSync(tempPath, { force: true });
        throw error;
    }
    return { path: filePath, numBytes: layout.totalBytes };
}
