import { describe, expect, it } from "vitest";
import { MemoryStateExchange, stateBufferBytes } from "../../../../engine/runtime/MemoryStateExchange.js";
import { SequenceStateError } from "../../../../engine/runtime/sequenceStateErrors.js";

// The buffer policy of the in-memory exchange over a stand-in of the patched addon's two methods
// and the sequence members node-llama-cpp's own save and load use. The real addon's bytes are
// checked against llama.cpp's state files in test/model/runtime/memoryStateExchange.test.ts.

type LlamaContextSequence = Parameters<MemoryStateExchange["save"]>[0];

interface StandIn {
    readonly sequence: LlamaContextSequence;
    /** The state the addon "holds"; what a save writes. */
    state: Buffer;
    readonly saveCalls: number[];
    loaded: Uint8Array[] | undefined;
    loadError: Error | undefined;
    readonly internals: { _contextTokens: number[]; _nextTokenIndex: number; _loadedTokenPredictions: unknown[] };
}

function standIn(state: Buffer): StandIn {
    const self: Omit<StandIn, "sequence" | "internals"> = { state, saveCalls: [], loaded: undefined, loadError: undefined };
    const addon = {
        saveSequenceStateToBuffer: async (_id: number, _tokens: Uint32Array, target: Uint8Array): Promise<number> => {
            self.saveCalls.push(target.length);
            if (self.state.length <= target.length) {
                target.set(self.state);
            }
            return self.state.length;
        },
        loadSequenceStateFromChunks: async (_id: number, chunks: readonly Uint8Array[]): Promise<Uint32Array> => {
            if (self.loadError !== undefined) {
                throw self.loadError;
            }
            self.loaded = chunks.map((chunk) => Uint8Array.from(chunk));
            return Uint32Array.from([7, 8, 9]);
        }
    };
    const internals = {
        _sequenceId: 0,
        _lock: {},
        _context: { _ctx: addon },
        _contextTokens: [1, 2, 3],
        _nextTokenIndex: 3,
        _loadedTokenPredictions: ["a prediction"],
        _tokenPredictorOwner: {},
        _abortTokenPredictor: async () => undefined,
        _ensureNotDisposed: () => undefined,
        contextSize: 100
    };
    return Object.assign(self, { sequence: internals as unknown as LlamaContextSequence, internals });
}

const bytesOf = (length: number, seed: number): Buffer => Buffer.from(Array.from({ length }, (_, index) => (index * 31 + seed) % 251));

describe("MemoryStateExchange", () => {
    it("saves the state's bytes; once released, every view of them reads as empty, and their memory is the next save's", async () => {
        const exchange = new MemoryStateExchange();
        const addon = standIn(bytesOf(6000, 1));

        const first = await exchange.save(addon.sequence, "a", undefined);
        expect(Buffer.compare(first.bytes, bytesOf(6000, 1))).toBe(0);
        expect(addon.saveCalls).toEqual([4096, 6144]); // nothing to reuse yet: a page-sized try told the size, then saved into a buffer of its class
        const view = first.bytes.subarray(10, 20);
        first.release();
        first.release(); // idempotent
        expect(first.bytes.length).toBe(0);
        expect(view.length).toBe(0);
        expect(exchange.numRetainedBytes).toBe(6144);

        addon.state = bytesOf(5000, 2); // a shorter state into the spare: read only up to its own length
        const second = await exchange.save(addon.sequence, "b", 5000);
        expect(addon.saveCalls).toEqual([4096, 6144, 6144]);
        expect(exchange.numRetainedBytes).toBe(0); // lent out
        expect(second.bytes.length).toBe(5000);
        expect(Buffer.compare(second.bytes, bytesOf(5000, 2))).toBe(0);
        second.release();
        expect(exchange.numRetainedBytes).toBe(6144);
    });

    it("a state bigger than the spare gets a buffer of its size class, saved in the same call", async () => {
        const exchange = new MemoryStateExchange();
        const addon = standIn(bytesOf(16, 3));
        (await exchange.save(addon.sequence, "a", 16)).release();
        addon.state = bytesOf(9000, 4);

        const saved = await exchange.save(addon.sequence, "b", undefined);
        expect(addon.saveCalls).toEqual([4096, 4096, 10240]);
        expect(Buffer.compare(saved.bytes, bytesOf(9000, 4))).toBe(0);
        saved.release();
        expect(exchange.numRetainedBytes).toBe(10240); // the bigger one is kept
    });

    it("saves a state a little longer than the last one into the last one's buffer, as a chat's next turn", async () => {
        const exchange = new MemoryStateExchange();
        const addon = standIn(bytesOf(9000, 5));
        (await exchange.save(addon.sequence, "turn 1", 9000)).release();
        addon.state = bytesOf(10_000, 6);

        const saved = await exchange.save(addon.sequence, "turn 2", 10_000);
        expect(addon.saveCalls).toEqual([10240, 10240]); // no fresh buffer for turn 2
        expect(Buffer.compare(saved.bytes, bytesOf(10_000, 6))).toBe(0);
    });

    it("keeps no spare above its limit", async () => {
        const exchange = new MemoryStateExchange(8192);
        const addon = standIn(bytesOf(9000, 5));
        const saved = await exchange.save(addon.sequence, "a", 9000);
        saved.release();
        expect(saved.bytes.length).toBe(0);
        expect(exchange.numRetainedBytes).toBe(0);
    });

    it("loads the chunks as given and takes the sequence's tokens from the state, dropping token predictions", async () => {
        const exchange = new MemoryStateExchange();
        const addon = standIn(bytesOf(8, 6));
        const chunks = [bytesOf(5, 7), bytesOf(0, 0), bytesOf(9, 8)];

        await exchange.load(addon.sequence, chunks, 14, "state");
        expect(addon.loaded?.map((chunk) => Buffer.from(chunk).toString("hex"))).toEqual(chunks.map((chunk) => chunk.toString("hex")));
        expect(addon.internals._contextTokens).toEqual([7, 8, 9]);
        expect(addon.internals._nextTokenIndex).toBe(3);
        expect(addon.internals._loadedTokenPredictions).toEqual([]);
    });

    it("refuses chunks of another length than the state's, and gives llama.cpp's refusal as a SequenceStateError with the bytes", async () => {
        const exchange = new MemoryStateExchange();
        const addon = standIn(bytesOf(8, 9));
        await expect(exchange.load(addon.sequence, [bytesOf(5, 1)], 6, "state")).rejects.toThrow(/\(6 bytes\).*its chunks hold 5 bytes/);
        expect(addon.loaded).toBeUndefined();

        addon.loadError = new Error("llama.cpp refused the state: failed to restore kv cache");
        const error = await exchange.load(addon.sequence, [bytesOf(6, 1)], 6, "state").catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(SequenceStateError);
        expect((error as SequenceStateError).code).toBe("sequence_state_failed");
        expect((error as Error).message).toMatch(
            /^The KV state \(6 bytes\) could not be loaded into its sequence: llama\.cpp refused the state: failed to restore kv cache\. Nothing was generated/
        );
    });

    it("sizes buffers in classes a quarter of a power of two apart, from one memory page up", () => {
        expect([0, 1, 4096, 4097, 5120, 5121, 8192, 2 ** 20 + 1, 3 * 2 ** 30].map(stateBufferBytes)).toEqual([
            4096,
            4096,
            4096,
            5120,
            5120,
            6144,
            8192,
            1.25 * 2 ** 20,
            3 * 2 ** 30
        ]);
        for (let numBytes = 4097; numBytes < 4_000_000; numBytes += 9973) {
            const size = stateBufferBytes(numBytes);
            expect(size).toBeGreaterThanOrEqual(numBytes);
            expect(size).toBeLessThanOrEqual(1.25 * numBytes);
        }
        expect(() => stateBufferBytes(-1)).toThrow(/a state buffer for -1 bytes/);
    });
});
