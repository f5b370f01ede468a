import os from "node:os";
import { invariant } from "../engine/core/invariant.js";
import type { BoundedFileReader } from "./BoundedFileReader.js";
import { GgufHeaderProblem, formatCount } from "./GgufHeaderProblem.js";

export type GgufNumericArray =
    | Uint8Array
    | Int8Array
    | Uint16Array
    | Int16Array
    | Uint32Array
    | Int32Array
    | Float32Array
    | Float64Array
    | BigUint64Array
    | BigInt64Array;

/**
 * A metadata value: 64-bit integers as bigints (as node-llama-cpp reads them), other numbers as
 * numbers, numeric arrays as typed arrays (one copy of the file's bytes, however long).
 */
export type GgufMetadataValue = number | bigint | boolean | string | GgufNumericArray | readonly boolean[] | readonly string[];

/** `gguf_type` ids 0–12; 9 is an array. */
export const GGUF_TYPE_STRING = 8;
export const GGUF_TYPE_ARRAY = 9;
export const GGUF_TYPE_UINT32 = 4;

interface FixedType {
    readonly name: string;
    readonly bytes: number;
    readonly read: (bytes: Buffer) => number | bigint | boolean;
    readonly array: (bytes: Buffer, count: number) => GgufNumericArray | readonly boolean[];
}

/** Typed arrays over a copy of the file's little-endian bytes; every platform Kvault ships for is little-endian. */
function copied<T>(make: (buffer: ArrayBuffer) => T): (bytes: Buffer) => T {
    return (bytes) => {
        const copy = new Uint8Array(bytes.length);
        copy.set(bytes);
        return make(copy.buffer);
    };
}

const fixedTypes: Readonly<Record<number, FixedType>> = {
    0: { name: "uint8", bytes: 1, read: (b) => b.readUInt8(0), array: copied((a) => new Uint8Array(a)) },
    1: { name: "int8", bytes: 1, read: (b) => b.readInt8(0), array: copied((a) => new Int8Array(a)) },
    2: { name: "uint16", bytes: 2, read: (b) => b.readUInt16LE(0), array: copied((a) => new Uint16Array(a)) },
    3: { name: "int16", bytes: 2, read: (b) => b.readInt16LE(0), array: copied((a) => new Int16Array(a)) },
    4: { name: "uint32", bytes: 4, read: (b) => b.readUInt32LE(0), array: copied((a) => new Uint32Array(a)) },
    5: { name: "int32", bytes: 4, read: (b) => b.readInt32LE(0), array: copied((a) => new Int32Array(a)) },
    6: { name: "float32", bytes: 4, read: (b) => b.readFloatLE(0), array: copied((a) => new Float32Array(a)) },
    // ggml reads a bool as a byte that is true unless 0.
    7: {
        name: "bool",
        bytes: 1,
        read: (b) => b.readUInt8(0) !== 0,
        array: (b, count) => Array.from({ length: count }, (_, i) => b[i] !== 0)
    },
    10: { name: "uint64", bytes: 8, read: (b) => b.readBigUInt64LE(0), array: copied((a) => new BigUint64Array(a)) },
    11: { name: "int64", bytes: 8, read: (b) => b.readBigInt64LE(0), array: copied((a) => new BigInt64Array(a)) },
    12: { name: "float64", bytes: 8, read: (b) => b.readDoubleLE(0), array: copied((a) => new Float64Array(a)) }
};

/** A string's length prefix: the least a string (an empty one) takes. */
const STRING_PREFIX_BYTES = 8;

/** The name GGUF gives a type id, for messages. */
export function ggufTypeName(type: number): string {
    return type === GGUF_TYPE_STRING ? "string" : type === GGUF_TYPE_ARRAY ? "array" : (fixedTypes[type]?.name ?? `type ${type}`);
}

/**
 * One metadata value of `type` at the reader's offset. Arrays are checked as a whole before one
 * element is allocated: count × element size (8, a length prefix, for strings) against the bytes
 * the file has left. Arrays of arrays are refused: llama.cpp reads none. `noteElementType` hears an
 * array's element type, which an empty array's value cannot tell.
 */
export function readGgufValue(
    reader: BoundedFileReader,
    type: number,
    what: () => string,
    noteElementType: (elementType: number) => void = () => undefined
): GgufMetadataValue {
    if (type === GGUF_TYPE_STRING) {
        return reader.string(what);
    }
    if (type !== GGUF_TYPE_ARRAY) {
        const fixed = knownFixedType(type, what);
        return fixed.read(reader.take(fixed.bytes, what));
    }
    const elementType = reader.u32(() => `${what()}'s element type`);
    noteElementType(elementType);
    const count = reader.u64(() => `${what()}'s element count`);
    if (elementType === GGUF_TYPE_ARRAY) {
        throw new GgufHeaderProblem(
            "unsupported",
            `${what()} is an array of arrays, which llama.cpp does not read (it reads arrays of numbers, booleans and strings). Open another model file`
        );
    }
    const elementBytes =
        elementType === GGUF_TYPE_STRING ? STRING_PREFIX_BYTES : knownFixedType(elementType, () => `${what()}'s elements`).bytes;
    const elementsOf =
        elementType === GGUF_TYPE_STRING ? "strings of at least 8 bytes" : `${elementBytes} byte${elementBytes === 1 ? "" : "s"}`;
    if (count * BigInt(elementBytes) > BigInt(reader.bytesLeft)) {
        throw new GgufHeaderProblem(
            "unreadable",
            `${what()} claims ${formatCount(count)} elements of ${elementsOf}; the file has ${formatCount(reader.bytesLeft)} bytes left`
        );
    }
    // From here the count is at most the file's size: a number, and an allocation the file pays for.
    const numElements = Number(count);
    reader.ensure(numElements * elementBytes, what);
    if (elementType === GGUF_TYPE_STRING) {
        const strings: string[] = [];
        for (let index = 0; index < numElements; index++) {
            strings.push(reader.string(() => `${what()}'s element ${formatCount(index)}`));
        }
        return strings;
    }
    const fixed = fixedTypes[elementType]!;
    invariant(os.endianness() === "LE", `GGUF arrays are read as little-endian typed arrays; this machine is ${os.endianness()}.`);
    return fixed.array(reader.take(numElements * fixed.bytes, what), numElements);
}

function knownFixedType(type: number, what: () => string): FixedType {
    const fixed = fixedTypes[type];
    if (fixed === undefined) {
        throw new GgufHeaderProblem("unreadable", `${what()} has value type ${formatCount(type)}, which no GGUF version defines (0 to 12)`);
    }
    return fixed;
}
