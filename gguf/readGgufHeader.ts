// Kvault's own GGUF header reader: model files are untrusted input (a download, a path typed in
// the model panel), and node-llama-cpp's reader trusts the counts in them (an array claiming 2^40
// elements ends the process; a header claiming 2^62 entries pins it). This one runs first, and
// checks every count and length against the bytes the file actually has before it allocates.
import fs from "node:fs";
import { ModelNotGgufError, ModelUnreadableError, ModelUnsupportedError } from "./ggufFileErrors.js";
import { BoundedFileReader } from "./BoundedFileReader.js";
import { GgufHeaderProblem, formatCount } from "./GgufHeaderProblem.js";
import { readGgufTensors, type GgufTensorHeader } from "./readGgufTensors.js";
import { GGUF_TYPE_UINT32, ggufTypeName, readGgufValue, type GgufMetadataValue } from "./readGgufValue.js";

export type { GgufTensorHeader } from "./readGgufTensors.js";
export type { GgufMetadataValue, GgufNumericArray } from "./readGgufValue.js";

export interface GgufHeaderLimits {
    /** The most bytes of header (metadata and tensor list) read; a real model's take a few MB. */
    readonly maxHeaderBytes: number;
    /** Bytes per read. */
    readonly chunkBytes: number;
}

export const ggufHeaderLimits: GgufHeaderLimits = { maxHeaderBytes: 128 * 1024 * 1024, chunkBytes: 64 * 1024 };

/** A metadata value's `gguf_type` id (0 to 12), and an array's element type. */
export interface GgufMetadataType {
    readonly type: number;
    /** Only for arrays (type 9). */
    readonly elementType?: number;
}

export interface GgufHeader {
    readonly version: number;
    readonly fileBytes: number;
    /** In file order. */
    readonly metadata: ReadonlyMap<string, GgufMetadataValue>;
    /** Each key's `gguf_type` ids, which the values alone do not tell apart (a uint32 and an int32 both read as numbers). */
    readonly metadataTypes: ReadonlyMap<string, GgufMetadataType>;
    readonly tensors: readonly GgufTensorHeader[];
    /** general.alignment, or GGUF's default of 32. */
    readonly alignment: number;
    /** Bytes from the file's start to the end of the metadata (node-llama-cpp's metadataSize). */
    readonly metadataEndOffset: number;
    /** Bytes from the file's start to the end of the tensor list, before padding. */
    readonly tensorListEndOffset: number;
    /** Where the tensor data starts: the tensor list's end, aligned (node-llama-cpp's infoEndOffset). */
    readonly dataOffset: number;
}

const GGUF_MAGIC = "GGUF";
const GGUF_DEFAULT_ALIGNMENT = 32;
/** The least a metadata entry takes: a key's length prefix, a one-byte key, a type, a one-byte value. */
const MIN_ENTRY_BYTES = 8 + 1 + 4 + 1;
/** The least a tensor's entry takes: a name's length prefix, the number of dimensions, a type, an offset. */
const MIN_TENSOR_BYTES = 8 + 4 + 4 + 8;

/**
 * The header of the GGUF file at `filePath`: version, metadata, tensor list, where the data starts.
 * Reads only the header, in bounded reads; allocates only for what the file's bytes hold, up to
 * `limits.maxHeaderBytes`. Throws model_unreadable (missing, unreadable, cut short, or damaged: a
 * count or length the file cannot hold, tensor data past its end), model_not_gguf, or
 * model_unsupported (a GGUF that llama.cpp cannot load), each naming the numbers and what to do.
 */
export function readGgufHeader(filePath: string, limits: GgufHeaderLimits = ggufHeaderLimits): GgufHeader {
    const fd = openModelFile(filePath);
    try {
        const fileBytes = fs.fstatSync(fd).size;
        const reader = new BoundedFileReader(fd, fileBytes, limits.maxHeaderBytes, limits.chunkBytes);
        checkMagic(filePath, reader);
        try {
            return readAfterMagic(reader);
        } catch (error) {
            throw asModelError(filePath, error);
        }
    } finally {
        fs.closeSync(fd);
    }
}

function readAfterMagic(reader: BoundedFileReader): GgufHeader {
    const version = readVersion(reader);
    const tensorCount = reader.u64(() => "the tensor count");
    const entryCount = reader.u64(() => "the metadata entry count");
    checkCount(reader, entryCount, MIN_ENTRY_BYTES, "metadata entries");
    checkCount(reader, tensorCount, MIN_TENSOR_BYTES, "tensors");

    const numEntries = Number(entryCount);
    const metadata = new Map<string, GgufMetadataValue>();
    const types = new Map<string, GgufMetadataType>();
    for (let index = 0; index < numEntries; index++) {
        const entry = `metadata entry ${formatCount(index + 1)} of ${formatCount(numEntries)}`;
        const key = reader.string(() => `${entry}'s key`);
        if (key === "") {
            throw new GgufHeaderProblem("unreadable", `${entry} has an empty key`);
        }
        if (metadata.has(key)) {
            throw new GgufHeaderProblem("unreadable", `${entry} repeats the key ${key}`);
        }
        const what = (): string => `${entry} (${key})`;
        const type = reader.u32(() => `${what()}'s type`);
        types.set(key, { type });
        metadata.set(
            key,
            readGgufValue(reader, type, what, (elementType) => types.set(key, { type, elementType }))
        );
    }
    const metadataEndOffset = reader.offset;
    const alignment = readAlignment(metadata, types);
    const tensors = readGgufTensors(reader, Number(tensorCount), alignment);
    return { version, fileBytes: reader.fileBytes, metadata, metadataTypes: types, alignment, metadataEndOffset, ...tensors };
}

/** GGUF 2 and 3, little-endian, as llama.cpp reads them. */
function readVersion(reader: BoundedFileReader): number {
    const version = reader.u32(() => "the version");
    if (version === 0) {
        throw new GgufHeaderProblem("unreadable", "its version is 0");
    }
    if ((version & 0xffff) === 0) {
        throw new GgufHeaderProblem(
            "unsupported",
            `its version reads as ${formatCount(version)}, which is version ${formatCount(version >>> 24)} written big-endian; llama.cpp here reads little-endian files only. Download the little-endian GGUF of the model`
        );
    }
    if (version === 1) {
        throw new GgufHeaderProblem(
            "unsupported",
            "it is GGUF version 1, which llama.cpp no longer reads. Download the model again in a current GGUF"
        );
    }
    if (version > 3) {
        throw new GgufHeaderProblem(
            "unsupported",
            `it is GGUF version ${formatCount(version)}, and this Kvault reads versions 2 and 3. Update Kvault, or open another model file`
        );
    }
    return version;
}

/** A count from the header against the least the file must still hold for it. */
function checkCount(reader: BoundedFileReader, count: bigint, minBytes: number, what: string): void {
    if (count * BigInt(minBytes) > BigInt(reader.bytesLeft)) {
        throw new GgufHeaderProblem(
            "unreadable",
            `its header claims ${formatCount(count)} ${what} of at least ${minBytes} bytes each; the file has ${formatCount(reader.bytesLeft)} bytes left`
        );
    }
}

/** general.alignment: a uint32 power of two, as llama.cpp requires; 32 without one. */
function readAlignment(metadata: ReadonlyMap<string, GgufMetadataValue>, types: ReadonlyMap<string, GgufMetadataType>): number {
    const type = types.get("general.alignment")?.type;
    if (type === undefined) {
        return GGUF_DEFAULT_ALIGNMENT;
    }
    if (type !== GGUF_TYPE_UINT32) {
        throw new GgufHeaderProblem("unreadable", `its general.alignment is a ${ggufTypeName(type)}; GGUF requires a uint32`);
    }
    const alignment = metadata.get("general.alignment") as number;
    if (alignment === 0 || (alignment & (alignment - 1)) !== 0) {
        throw new GgufHeaderProblem("unreadable", `its general.alignment is ${formatCount(alignment)}, not a power of 2`);
    }
    return alignment;
}

function openModelFile(filePath: string): number {
    let stat: fs.Stats;
    try {
        stat = fs.statSync(filePath);
    } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
        throw new ModelUnreadableError(
            `Cannot open the model ${filePath}: ${reason}. Give the full path of a .gguf file on the machine running Kvault.`,
            { cause: error }
        );
    }
    if (!stat.isFile()) {
        throw new ModelUnreadableError(`${filePath} is not a file (it is a directory or a device). Give the full path of a .gguf file.`);
    }
    try {
        return fs.openSync(filePath, "r");
    } catch (error) {
        throw new ModelUnreadableError(`Cannot read the model ${filePath}: ${(error as Error).message}. Check that Kvault may read it.`, {
            cause: error
        });
    }
}

function checkMagic(filePath: string, reader: BoundedFileReader): void {
    const numRead = Math.min(GGUF_MAGIC.length, reader.fileBytes);
    let start: string;
    try {
        start = reader.take(numRead, () => "the magic").toString("latin1");
    } catch (error) {
        throw asModelError(filePath, error);
    }
    if (start !== GGUF_MAGIC) {
        const shown = numRead === 0 ? "it is empty" : `it starts with ${JSON.stringify(start)}`;
        throw new ModelNotGgufError(`${filePath} is not a GGUF file (${shown}; a GGUF file starts with "GGUF"). Open a .gguf model file.`);
    }
}

function asModelError(filePath: string, error: unknown): Error {
    if (error instanceof GgufHeaderProblem) {
        return error.kind === "unreadable"
            ? new ModelUnreadableError(
                  `${filePath} starts like a GGUF file, but its header could not be read (${error.detail}): the file is probably truncated or damaged. Download or copy it again.`
              )
            : new ModelUnsupportedError(`${filePath} is a GGUF file Kvault cannot use: ${error.detail}.`);
    }
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) {
        return new ModelUnreadableError(`Cannot read the model ${filePath}: ${(error as Error).message}. Check that Kvault may read it.`, {
            cause: error
        });
    }
    return error as Error; // a bug, not the file: it stays an exception
}
