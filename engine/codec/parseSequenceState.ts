import { ggmlTypeTraits, type GgmlTensorType } from "../gguf/ggufTypes.js";
import { StateFormatError } from "./codecErrors.js";
import type { KvLayerLayout, KvLayout } from "./KvLayout.js";

/** `LLAMA_STATE_SEQ_MAGIC`: the bytes "qsgg" on disk. */
export const STATE_SEQ_MAGIC = 0x67677371;
export const STATE_SEQ_VERSION = 3;

/** One layer's KV bytes as views into the state (no copies), in llama.cpp's cell order. */
export interface StateLayerData {
    /** `numCells × kRowBytes`. */
    readonly k: Buffer;
    /** `numCells × vRowBytes`, or when transposed `numVElements × (numCells × vElementBytes)`. */
    readonly v: Buffer;
}

export interface ParsedSequenceState {
    readonly tokens: Int32Array;
    /** The writing context's stream count (1 for a unified KV cache, else its sequence count). */
    readonly numStreams: number;
    /** Cell positions in cell order; the codec requires them to be exactly `[0, numCells)`, ascending. */
    readonly numCells: number;
    readonly layout: KvLayout;
    readonly layers: readonly StateLayerData[];
    /** Byte offsets where each section starts, for tests that truncate a state at every boundary. */
    readonly sectionOffsets: readonly number[];
}

/** What `parseSequenceStateMeta` returns: a state's every field but its KV bytes. */
export type SequenceStateMeta = Omit<ParsedSequenceState, "layers">;

const NO_BYTES = Buffer.alloc(0);

/**
 * Reads a little-endian state with bounds checked on every field: a truncated state is an error,
 * never a short read. With `kvElsewhere` the bytes are the state without its KV rows (written
 * straight into pages): the KV reads as empty and takes no bytes.
 */
class StateReader {
    offset = 0;
    readonly sections: number[] = [];

    constructor(
        private readonly bytes: Buffer,
        private readonly kvElsewhere: boolean
    ) {}

    section(): void {
        this.sections.push(this.offset);
    }

    private need(numBytes: number, what: string): void {
        if (numBytes < 0 || this.offset + numBytes > this.bytes.length) {
            throw new StateFormatError(`${what} needs ${numBytes} bytes but ${this.bytes.length - this.offset} remain`, this.offset);
        }
    }

    u32(what: string): number {
        this.need(4, what);
        const value = this.bytes.readUInt32LE(this.offset);
        this.offset += 4;
        return value;
    }
    i32(what: string): number {
        this.need(4, what);
        const value = this.bytes.readInt32LE(this.offset);
        this.offset += 4;
        return value;
    }
    u64(what: string): number {
        this.need(8, what);
        const value = this.bytes.readBigUInt64LE(this.offset);
        this.offset += 8;
        if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
            throw new StateFormatError(`${what} is ${value}, beyond any real row size`, this.offset - 8);
        }
        return Number(value);
    }

    slice(numBytes: number, what: string): Buffer {
        this.need(numBytes, what);
        const view = this.bytes.subarray(this.offset, this.offset + numBytes);
        this.offset += numBytes;
        return view;
    }

    /** A layer's K or V bytes: a view, or nothing where the KV is elsewhere. */
    kv(numBytes: number, what: string): Buffer {
        return this.kvElsewhere ? NO_BYTES : this.slice(numBytes, what);
    }

    get remaining(): number {
        return this.bytes.length - this.offset;
    }
}

/**
 * Parses a state written by `llama_state_seq_save_file` for a plain KV cache (node-llama-cpp's
 * `saveStateToFile`). Validates every length against the bytes present; never trusts a count.
 * Multi-axis positions (M-RoPE cell ext) and non-KV memories are refused as unsupported.
 */
export function parseSequenceState(bytes: Buffer): ParsedSequenceState {
    return parseState(bytes, false);
}

/**
 * Parses the metadata of a state whose KV rows were written elsewhere (llama.cpp saving straight
 * into pages, `planStateTarget`): the same checks as `parseSequenceState` on every other field.
 * The layout and cell count it returns say where the KV went; the caller compares them with the plan.
 */
export function parseSequenceStateMeta(meta: Buffer): SequenceStateMeta {
    const { layers: _kvElsewhere, ...parsed } = parseState(meta, true);
    return parsed;
}

function parseState(bytes: Buffer, kvElsewhere: boolean): ParsedSequenceState {
    const reader = new StateReader(bytes, kvElsewhere);

    reader.section();
    const magic = reader.u32("magic");
    if (magic !== STATE_SEQ_MAGIC) {
        throw new StateFormatError(`magic is 0x${magic.toString(16)}, a sequence state starts with 0x${STATE_SEQ_MAGIC.toString(16)}`, 0);
    }
    const version = reader.u32("version");
    if (version !== STATE_SEQ_VERSION) {
        throw new StateFormatError(`version ${version} is not the supported version ${STATE_SEQ_VERSION}`, 4);
    }

    reader.section();
    const numTokens = reader.u32("token count");
    if (numTokens * 4 > reader.remaining) {
        throw new StateFormatError(`${numTokens} tokens need ${numTokens * 4} bytes but ${reader.remaining} remain`, reader.offset);
    }
    const tokenBytes = reader.slice(numTokens * 4, "tokens");
    const tokens = new Int32Array(numTokens);
    for (let i = 0; i < numTokens; i++) {
        tokens[i] = tokenBytes.readInt32LE(i * 4);
    }

    reader.section();
    const numStreams = reader.u32("stream count");
    if (numStreams === 0 || numStreams > 4096) {
        throw new StateFormatError(`stream count ${numStreams} is outside [1, 4096]`, reader.offset - 4);
    }

    let numCells: number | undefined;
    let parsed: { layout: KvLayout; layers: StateLayerData[] } | undefined;
    for (let stream = 0; stream < numStreams; stream++) {
        reader.section();
        const cellCount = reader.u32(`cell count of stream ${stream}`);
        if (cellCount === 0) {
            continue;
        }
        if (numCells !== undefined) {
            throw new StateFormatError(`stream ${stream} holds cells too; a sequence state has one non-empty stream`, reader.offset - 4);
        }
        numCells = cellCount;
        if (cellCount * 12 > reader.remaining) {
            throw new StateFormatError(
                `${cellCount} cells need at least ${cellCount * 12} bytes of metadata but ${reader.remaining} remain`,
                reader.offset
            );
        }

        reader.section();
        const cellsAt = reader.offset;
        // position, sequence count, sequence id (ignored on load, as llama.cpp does): 12 bytes a cell, checked present above
        const cells = reader.slice(cellCount * 12, "cells");
        for (let cell = 0; cell < cellCount; cell++) {
            const position = cells.readInt32LE(cell * 12);
            const numSeqIds = cells.readUInt32LE(cell * 12 + 4);
            if (numSeqIds !== 1) {
                throw new StateFormatError(
                    `cell ${cell} belongs to ${numSeqIds} sequences; a sequence state has exactly 1 (or the cells carry M-RoPE data, which is not supported)`,
                    cellsAt + cell * 12 + 4
                );
            }
            if (position !== cell) {
                throw new StateFormatError(
                    `cell ${cell} holds position ${position}; positions must run 0, 1, 2, … in cell order`,
                    cellsAt + cell * 12
                );
            }
        }
        parsed = parseLayers(reader, cellCount);
    }
    if (reader.remaining !== 0) {
        throw new StateFormatError(`${reader.remaining} bytes follow the end of the state`, reader.offset);
    }
    if (numCells === undefined || parsed === undefined) {
        throw new StateFormatError("the state holds no cells", reader.offset);
    }
    if (numCells !== numTokens) {
        throw new StateFormatError(`the state lists ${numTokens} tokens but holds ${numCells} cells`, 8);
    }

    return { tokens, numStreams, numCells, layout: parsed.layout, layers: parsed.layers, sectionOffsets: reader.sections };
}

function parseLayers(reader: StateReader, numCells: number): { layout: KvLayout; layers: StateLayerData[] } {
    reader.section();
    const vTransposedFlag = reader.u32("V layout flag");
    if (vTransposedFlag > 1) {
        throw new StateFormatError(`V layout flag is ${vTransposedFlag}, expected 0 or 1`, reader.offset - 4);
    }
    const numLayers = reader.u32("layer count");
    if (numLayers === 0 || numLayers > 1024) {
        throw new StateFormatError(`layer count ${numLayers} is outside [1, 1024]`, reader.offset - 4);
    }

    const kParts: { kType: number; kRowBytes: number; k: Buffer }[] = [];
    for (let layer = 0; layer < numLayers; layer++) {
        reader.section();
        const kType = reader.i32(`K type of layer ${layer}`);
        const kRowBytes = reader.u64(`K row size of layer ${layer}`);
        if (kRowBytes === 0) {
            throw new StateFormatError(`layer ${layer} has K rows of 0 bytes`, reader.offset - 8);
        }
        refusePartialBlocks(kType, kRowBytes, `layer ${layer}'s K rows`, reader.offset - 8);
        kParts.push({ kType, kRowBytes, k: reader.kv(numCells * kRowBytes, `K of layer ${layer}`) });
    }

    const layers: KvLayerLayout[] = [];
    const data: StateLayerData[] = [];
    for (let layer = 0; layer < numLayers; layer++) {
        reader.section();
        const { kType, kRowBytes, k } = kParts[layer]!;
        const vType = reader.i32(`V type of layer ${layer}`);
        if (vTransposedFlag === 0) {
            const vRowBytes = reader.u64(`V row size of layer ${layer}`);
            if (vRowBytes === 0) {
                throw new StateFormatError(`layer ${layer} has V rows of 0 bytes`, reader.offset - 8);
            }
            refusePartialBlocks(vType, vRowBytes, `layer ${layer}'s V rows`, reader.offset - 8);
            layers.push({ kType, vType, kRowBytes, vRowBytes, vElementBytes: 0, numVElements: 0 });
            data.push({ k, v: reader.kv(numCells * vRowBytes, `V of layer ${layer}`) });
        } else {
            const vElementBytes = reader.u32(`V element size of layer ${layer}`);
            const numVElements = reader.u32(`V width of layer ${layer}`);
            if (vElementBytes === 0 || numVElements === 0) {
                throw new StateFormatError(
                    `layer ${layer} has transposed V of ${numVElements} elements of ${vElementBytes} bytes`,
                    reader.offset - 8
                );
            }
            const vTraits = ggmlTypeTraits[vType as GgmlTensorType] as (typeof ggmlTypeTraits)[GgmlTensorType] | undefined;
            if (vTraits !== undefined && vTraits.blockSize !== 1) {
                throw new StateFormatError(
                    `layer ${layer} has transposed V of type ${vTraits.name}, whose blocks span positions; llama.cpp keeps a quantized V in rows`,
                    reader.offset - 8
                );
            }
            if (vTraits !== undefined && vTraits.blockBytes !== vElementBytes) {
                throw new StateFormatError(
                    `layer ${layer} has transposed V elements of ${vElementBytes} bytes, ${vTraits.name}'s are ${vTraits.blockBytes}`,
                    reader.offset - 8
                );
            }
            layers.push({ kType, vType, kRowBytes, vRowBytes: vElementBytes * numVElements, vElementBytes, numVElements });
            data.push({ k, v: reader.kv(numCells * vElementBytes * numVElements, `transposed V of layer ${layer}`) });
        }
    }
    return { layout: { vTransposed: vTransposedFlag === 1, layers }, layers: data };
}

/**
 * A row of a block-quantized type (Q8_0: 32 values in 34 bytes, Q4_0: in 18) is whole blocks, so
 * every position's row, and so every page, ends on a block boundary; a row size that is not is a
 * malformed state. Types the codec does not know are passed on as they are: their rows are
 * copied whole and only a context of the same layout loads them.
 */
function refusePartialBlocks(type: number, rowBytes: number, what: string, offset: number): void {
    const traits = ggmlTypeTraits[type as GgmlTensorType] as (typeof ggmlTypeTraits)[GgmlTensorType] | undefined;
    if (traits !== undefined && rowBytes % traits.blockBytes !== 0) {
        throw new StateFormatError(
            `${what} are ${rowBytes} bytes of ${traits.name}, not whole ${traits.blockBytes}-byte blocks of ${traits.blockSize} values`,
            offset
        );
    }
}
