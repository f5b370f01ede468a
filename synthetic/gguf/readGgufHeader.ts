import fs from "node:fs";
import { KvaultError } from "../../engine/core/KvaultError.js";
import { alignUp, GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgufValueType, type GgufValue } from "../../engine/gguf/ggufTypes.js";

/** A GGUF file this reader cannot read: not GGUF, another version, cut short, or a value out of range. */
export class GgufReadError extends KvaultError {
    readonly code = "gguf_unreadable";
}

/** A value of a type the writer does not produce (u8, f64, arrays of bools, ...): read past, kept as its type tags only. */
export interface UnsupportedGgufValue {
    readonly type: "unsupported";
    readonly valueType: GgufValueType;
    readonly itemType?: GgufValueType;
}

export interface GgufTensorInfo {
    readonly name: string;
    /** ggml order, `ne0` first. */
    readonly dims: readonly number[];
    /** ggml_type, as stored; not necessarily one the writer knows. */
    readonly type: number;
    /** Bytes from the start of the file. */
    readonly offset: number;
}

export interface GgufHeader {
    readonly version: number;
    readonly metadata: ReadonlyMap<string, GgufValue | UnsupportedGgufValue>;
    readonly tensors: readonly GgufTensorInfo[];
    readonly dataStart: number;
}

/** Fixed sizes of the scalar types (gguf.h); strings and arrays are read by their lengths. */
const scalarBytes: Partial<Record<GgufValueType, number>> = {
    [GgufValueType.UInt8]: 1,
    [GgufValueType.Int8]: 1,
    [GgufValueType.UInt16]: 2,
    [GgufValueType.Int16]: 2,
    [GgufValueType.UInt32]: 4,
    [GgufValueType.Int32]: 4,
    [GgufValueType.Float32]: 4,
    [GgufValueType.Bool]: 1,
    [GgufValueType.UInt64]: 8,
    [GgufValueType.Int64]: 8,
    [GgufValueType.Float64]: 8
};

/** Reads forward through a file, a window of bytes at a time; the header of a 262k-token vocabulary is ~15 MB. */
class FileCursor {
    private window = Buffer.alloc(0);
    private windowStart = 0;
    position = 0;

    constructor(
        private readonly fd: number,
        private readonly size: number,
        private readonly filePath: string
    ) {}

    take(numBytes: number): Buffer {
        if (this.position + numBytes > this.size) {
            throw new GgufReadError(
                `${this.filePath} ends at byte ${this.size} inside its GGUF header (needed ${numBytes} bytes at ${this.position}). The file is cut short: get it again.`
            );
        }
        const end = this.position + numBytes;
        if (this.position < this.windowStart || end > this.windowStart + this.window.length) {
            this.window = Buffer.alloc(Math.min(this.size - this.position, Math.max(numBytes, 1 << 20)));
            fs.readSync(this.fd, this.window, 0, this.window.length, this.position);
            this.windowStart = this.position;
        }
        const at = this.position - this.windowStart;
        this.position = end;
        return this.window.subarray(at, at + numBytes);
    }

    u32(): number {
        return this.take(4).readUInt32LE(0);
    }

    /** A u64 that must fit a JS number: counts, lengths and offsets. */
    count(what: string): number {
        const value = this.take(8).readBigUInt64LE(0);
        if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
            throw new GgufReadError(`${this.filePath}: ${what} is ${value}, beyond what any GGUF file holds. The file is damaged.`);
        }
        return Number(value);
    }

    string(): string {
        return this.take(this.count("a string's length")).toString("utf8");
    }
}

function readScalar(cursor: FileCursor, type: GgufValueType): GgufValue | undefined {
    switch (type) {
        case GgufValueType.UInt32:
            return { type: "u32", value: cursor.u32() };
        case GgufValueType.Int32:
            return { type: "i32", value: cursor.take(4).readInt32LE(0) };
        case GgufValueType.UInt64:
            return { type: "u64", value: cursor.take(8).readBigUInt64LE(0) };
        case GgufValueType.Float32:
            return { type: "f32", value: cursor.take(4).readFloatLE(0) };
        case GgufValueType.Bool:
            return { type: "bool", value: cursor.take(1)[0] !== 0 };
        case GgufValueType.String:
            return { type: "string", value: cursor.string() };
        default:
            return undefined;
    }
}

function readValue(cursor: FileCursor, type: GgufValueType, key: string): GgufValue | UnsupportedGgufValue {
    if (type === GgufValueType.Array) {
        const itemType = cursor.u32() as GgufValueType;
        const length = cursor.count(`the length of ${key}`);
        switch (itemType) {
            case GgufValueType.String: {
                const value: string[] = new Array<string>(length);
                for (let i = 0; i < length; i++) {
                    value[i] = cursor.string();
                }
                return { type: "string[]", value };
            }
            case GgufValueType.Float32:
            case GgufValueType.Int32: {
                const bytes = cursor.take(length * 4);
                const copy = new Uint8Array(bytes).buffer; // aligned, owned
                return itemType === GgufValueType.Float32
                    ? { type: "f32[]", value: new Float32Array(copy) }
                    : { type: "i32[]", value: new Int32Array(copy) };
            }
            default: {
                const itemBytes = scalarBytes[itemType];
                if (itemBytes === undefined) {
                    throw new GgufReadError(
                        `${key} is an array of GGUF type ${itemType}, which this reader cannot skip. The file is damaged.`
                    );
                }
                cursor.take(length * itemBytes);
                return { type: "unsupported", valueType: type, itemType };
            }
        }
    }
    const scalar = readScalar(cursor, type);
    if (scalar !== undefined) {
        return scalar;
    }
    const numBytes = scalarBytes[type];
    if (numBytes === undefined) {
        throw new GgufReadError(`${key} has GGUF type ${type}, which does not exist. The file is damaged.`);
    }
    cursor.take(numBytes);
    return { type: "unsupported", valueType: type };
}

/** Reads a GGUF v3 file's header: its metadata, its tensor table and where the tensor data starts. */
export function readGgufHeader(filePath: string): GgufHeader {
    const fd = fs.openSync(filePath, "r");
    try {
        const cursor = new FileCursor(fd, fs.fstatSync(fd).size, filePath);
        if (cursor.u32() !== GGUF_MAGIC) {
            throw new GgufReadError(`${filePath} is not a GGUF file (it does not start with "GGUF").`);
        }
        const version = cursor.u32();
        if (version !== 3) {
            throw new GgufReadError(`${filePath} is GGUF version ${version}; this reader reads version 3.`);
        }
        const numTensors = cursor.count("the tensor count");
        const numEntries = cursor.count("the metadata count");
        const metadata = new Map<string, GgufValue | UnsupportedGgufValue>();
        for (let i = 0; i < numEntries; i++) {
            const key = cursor.string();
            metadata.set(key, readValue(cursor, cursor.u32() as GgufValueType, key));
        }
        const relative: { name: string; dims: number[]; type: number; offset: number }[] = [];
        for (let i = 0; i < numTensors; i++) {
            const name = cursor.string();
            const numDims = cursor.u32();
            const dims: number[] = [];
            for (let d = 0; d < numDims; d++) {
                dims.push(cursor.count(`a dimension of ${name}`));
            }
            relative.push({ name, dims, type: cursor.u32(), offset: cursor.count(`the offset of ${name}`) });
        }
        const alignmentValue = metadata.get("general.alignment");
        const alignment = alignmentValue?.type === "u32" ? alignmentValue.value : GGUF_DEFAULT_ALIGNMENT;
        const dataStart = alignUp(cursor.position, alignment);
        return { version, metadata, tensors: relative.map((tensor) => ({ ...tensor, offset: dataStart + tensor.offset })), dataStart };
    } finally {
        fs.closeSync(fd);
    }
}
