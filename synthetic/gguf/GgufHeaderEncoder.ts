import { invariant } from "../../engine/core/invariant.js";
import {
    alignUp,
    GGUF_MAGIC,
    GGUF_VERSION,
    GgufValueType,
    ggmlTypeTraits,
    numTensorElements,
    tensorDataBytes,
    type GgufMetadataEntry,
    type GgufTensorSpec,
    type GgufValue
} from "../../engine/gguf/ggufTypes.js";

/** Where each tensor's data lands, in bytes from the start of the file. */
export interface GgufLayout {
    readonly header: Buffer;
    /** Start of the tensor data section (header plus padding to the alignment). */
    readonly dataStart: number;
    /** Per tensor, `[start, end)` in bytes from the start of the file. */
    readonly tensorRanges: readonly { readonly start: number; readonly end: number }[];
    readonly totalBytes: number;
}

/** A growable little-endian byte sink; the header of a 128k-token vocabulary is a few MB. */
class ByteSink {
    private buffer = Buffer.alloc(1 << 16);
    private length = 0;

    private reserve(numBytes: number): number {
        if (this.length + numBytes > this.buffer.length) {
            const grown = Buffer.alloc(Math.max(this.buffer.length * 2, this.length + numBytes));
            this.buffer.copy(grown, 0, 0, this.length);
            this.buffer = grown;
        }
        const at = this.length;
        this.length += numBytes;
        return at;
    }

    // Each writer reserves first: reserving may replace `this.buffer`.
    u16(value: number): void {
        const at = this.reserve(2);
        this.buffer.writeUInt16LE(value, at);
    }
    u32(value: number): void {
        const at = this.reserve(4);
        this.buffer.writeUInt32LE(value, at);
    }
    i32(value: number): void {
        const at = this.reserve(4);
        this.buffer.writeInt32LE(value, at);
    }
    u64(value: bigint | number): void {
        const at = this.reserve(8);
        this.buffer.writeBigUInt64LE(BigInt(value), at);
    }
    f32(value: number): void {
        const at = this.reserve(4);
        this.buffer.writeFloatLE(value, at);
    }
    u8(value: number): void {
        const at = this.reserve(1);
        this.buffer.writeUInt8(value, at);
    }

    string(value: string): void {
        const bytes = Buffer.from(value, "utf8");
        this.u64(bytes.length);
        const at = this.reserve(bytes.length);
        bytes.copy(this.buffer, at);
    }

    bytes(): Buffer {
        return this.buffer.subarray(0, this.length);
    }
}

function writeValue(sink: ByteSink, value: GgufValue): void {
    switch (value.type) {
        case "u16":
            sink.u32(GgufValueType.UInt16);
            sink.u16(value.value);
            return;
        case "u32":
            sink.u32(GgufValueType.UInt32);
            sink.u32(value.value);
            return;
        case "i32":
            sink.u32(GgufValueType.Int32);
            sink.i32(value.value);
            return;
        case "u64":
            sink.u32(GgufValueType.UInt64);
            sink.u64(value.value);
            return;
        case "f32":
            sink.u32(GgufValueType.Float32);
            sink.f32(value.value);
            return;
        case "bool":
            sink.u32(GgufValueType.Bool);
            sink.u8(value.value ? 1 : 0);
            return;
        case "string":
            sink.u32(GgufValueType.String);
            sink.string(value.value);
            return;
        case "string[]":
            sink.u32(GgufValueType.Array);
            sink.u32(GgufValueType.String);
            sink.u64(value.value.length);
            for (const item of value.value) {
                sink.string(item);
            }
            return;
        case "f32[]":
            sink.u32(GgufValueType.Array);
            sink.u32(GgufValueType.Float32);
            sink.u64(value.value.length);
            for (const item of value.value) {
                sink.f32(item);
            }
            return;
        case "i32[]":
            sink.u32(GgufValueType.Array);
            sink.u32(GgufValueType.Int32);
            sink.u64(value.value.length);
            for (const item of value.value) {
                sink.i32(item);
            }
            return;
    }
}

/**
 * Encodes the GGUF v3 header (magic, version, counts, metadata, tensor infos) and computes
 * where every tensor's data goes, so the data can be streamed afterwards.
 */
export function encodeGgufHeader(
    metadata: readonly GgufMetadataEntry[],
    tensors: readonly GgufTensorSpec[],
    alignment: number
): GgufLayout {
    const keys = new Set<string>();
    for (const { key } of metadata) {
        if (keys.has(key)) {
            throw new Error(`GGUF metadata key "${key}" is given twice`);
        }
        keys.add(key);
    }

    const sink = new ByteSink();
    sink.u32(GGUF_MAGIC);
    sink.u32(GGUF_VERSION);
    sink.u64(tensors.length);
    sink.u64(metadata.length);
    for (const entry of metadata) {
        sink.string(entry.key);
        writeValue(sink, entry.value);
    }

    const relativeRanges: { start: number; end: number }[] = [];
    let relativeOffset = 0;
    for (const tensor of tensors) {
        relativeOffset = alignUp(relativeOffset, alignment);
        const { name, blockSize } = ggmlTypeTraits[tensor.type];
        invariant(
            (tensor.dims[0] ?? 1) % blockSize === 0,
            () => `tensor ${tensor.name}: rows of ${tensor.dims[0]} elements are not whole ${name} blocks of ${blockSize}`
        );
        const numBytes = tensorDataBytes(tensor.type, numTensorElements(tensor.dims));
        sink.string(tensor.name);
        sink.u32(tensor.dims.length);
        for (const dim of tensor.dims) {
            sink.u64(dim);
        }
        sink.u32(tensor.type);
        sink.u64(relativeOffset);
        relativeRanges.push({ start: relativeOffset, end: relativeOffset + numBytes });
        relativeOffset += numBytes;
    }

    const header = sink.bytes();
    const dataStart = alignUp(header.length, alignment);
    return {
        header,
        dataStart,
        tensorRanges: relativeRanges.map(({ start, end }) => ({ start: dataStart + start, end: dataStart + end })),
        totalBytes: dataStart + relativeOffset
    };
}
