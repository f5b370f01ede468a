import type { LlamaContextSequence } from "node-llama-cpp";
import type { PageChecks, StateTarget } from "../codec/statePages.js";
import { loadSequenceStateInMemory, saveSequenceStateInMemory, saveSequenceStateIntoChunks } from "./addonPatch/sequenceStateInMemory.js";
import { SequenceStateError } from "./sequenceStateErrors.js";
import type { SavedState, StateExchange } from "./StateExchange.js";
import { invariant } from "../core/invariant.js";
import { once } from "../core/once.js";

/**
 * A saved state's buffer this big or smaller is kept for the next save; a bigger one goes back to
 * the system when released. Fresh memory costs a page fault per 4 KiB on first touch, so a copy
 * into a reused buffer is several times faster than into a fresh one (docs/measurements.md).
 */
export const DEFAULT_MAX_RETAINED_STATE_BYTES = 256 * 1024 * 1024;

/** The smallest buffer a save takes: one memory page. */
const MIN_STATE_BUFFER_BYTES = 4096;

/**
 * The size of the buffer a state of `numBytes` is saved into: `numBytes` rounded up to a quarter
 * of its power of two (at most 25 % over, jemalloc's size classes), so that the spare a state
 * leaves serves the next state that is a little longer. A chat's states grow a turn at a time:
 * with buffers of the exact size, every next state missed the spare and was copied into fresh
 * memory (docs/measurements.md).
 */
export function stateBufferBytes(numBytes: number): number {
    invariant(Number.isSafeInteger(numBytes) && numBytes >= 0, () => `a state buffer for ${numBytes} bytes`);
    if (numBytes <= MIN_STATE_BUFFER_BYTES) {
        return MIN_STATE_BUFFER_BYTES;
    }
    const quarter = 2 ** (Math.floor(Math.log2(numBytes)) - 2);
    return Math.ceil(numBytes / quarter) * quarter;
}

/**
 * States through memory, with the patched addon's `saveSequenceStateToBuffer`,
 * `saveSequenceStateToChunks` and `loadSequenceStateFromChunks` (addonPatch/AddonContextStateBuffers.cpp):
 * llama.cpp copies the KV straight into a buffer of the engine's or into the pages themselves, and
 * straight out of the runs a load is given (views of the pages), where the file path writes a
 * file, reads it, writes another and reads that. A
 * save's buffer is reused: the one spare a released state leaves is the next save's. Releasing
 * detaches the buffer, so a state read after its release reads as empty (and fails the codec),
 * never as a later state's bytes; a buffer is only ever read up to its own state's length.
 */
export class MemoryStateExchange implements StateExchange {
    readonly kind = "memory";
    readonly verifiesPagesOnLoad = true;
    #spare: ArrayBuffer | undefined;

    constructor(private readonly maxRetainedBytes = DEFAULT_MAX_RETAINED_STATE_BYTES) {}

    /** Bytes kept for the next state (0 or the spare's size). */
    get numRetainedBytes(): number {
        return this.#spare?.byteLength ?? 0;
    }

    async save(sequence: LlamaContextSequence, _label: string, numBytes: number | undefined): Promise<SavedState> {
        const target = this.#take(numBytes ?? 0);
        let bytes: Buffer;
        try {
            bytes = await saveSequenceStateInMemory(sequence, target, (needed) => {
                this.#giveBack(target);
                return this.#take(needed);
            });
        } catch (error) {
            this.#giveBack(target);
            throw error instanceof SequenceStateError ? error : new SequenceStateError("save", numBytes, describe(error), error);
        }
        return { bytes, release: once(() => this.#giveBack(bytes)) };
    }

    /** The state's KV straight into the pages' bytes, its metadata into `target.meta`: one copy, no buffer of the state's size. */
    async saveInto(sequence: LlamaContextSequence, target: StateTarget): Promise<boolean> {
        try {
            return await saveSequenceStateIntoChunks(sequence, target);
        } catch (error) {
            throw new SequenceStateError("save", target.numBytes, describe(error), error);
        }
    }

    async load(
        sequence: LlamaContextSequence,
        chunks: readonly Uint8Array[],
        numBytes: number,
        _label: string,
        checks?: PageChecks
    ): Promise<void> {
        const numGiven = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
        if (numGiven !== numBytes) {
            throw new SequenceStateError("load", numBytes, `its chunks hold ${numGiven} bytes`);
        }
        try {
            await loadSequenceStateInMemory(sequence, chunks, checks);
        } catch (error) {
            throw new SequenceStateError("load", numBytes, describe(error), error);
        }
    }

    /** The spare when it holds `numBytes`, else a fresh buffer of `numBytes`' size class (the spare stays for later). */
    #take(numBytes: number): Buffer {
        const spare = this.#spare;
        if (spare !== undefined && spare.byteLength >= numBytes) {
            this.#spare = undefined;
            return Buffer.from(spare);
        }
        try {
            return Buffer.allocUnsafeSlow(stateBufferBytes(numBytes)); // never from Node's shared pool: the buffer is wholly this state's
        } catch (error) {
            throw new SequenceStateError("save", numBytes, `no memory for a buffer of that size (${describe(error)})`, error);
        }
    }

    /** Detaches every view of `buffer`'s memory; keeps the memory as the spare when it is the biggest kept and small enough. */
    #giveBack(buffer: Uint8Array): void {
        const whole = buffer.buffer as TransferableArrayBuffer;
        if (whole.detached || whole.byteLength === 0) {
            return;
        }
        const moved = whole.transfer();
        if (moved.byteLength <= this.maxRetainedBytes && moved.byteLength > (this.#spare?.byteLength ?? 0)) {
            this.#spare = moved;
        }
    }

    /** Lets the spare go; idempotent. */
    dispose(): void {
        this.#spare = undefined;
    }
}

/** ES2024's ArrayBuffer transfer (Node 22), which this project's TypeScript lib predates. */
interface TransferableArrayBuffer extends ArrayBuffer {
    readonly detached: boolean;
    transfer(): ArrayBuffer;
}

function describe(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}
