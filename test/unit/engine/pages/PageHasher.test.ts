import { describe, expect, it } from "vitest";
import { pageChecksum } from "../../../../engine/pages/pageChecksum.js";
import { OFF_THREAD_MIN_BYTES, PageHasher } from "../../../../engine/pages/PageHasher.js";

// The hashing threads can start before the first batch (an engine of big pages starts them and
// waits for them before it serves), so that the first long prompt's seal does not wait for them.

describe("PageHasher", () => {
    it("starts its threads on start(), once, and hashes as the engine's thread does; disposed, it runs none", async () => {
        const arena = new SharedArrayBuffer(2 * OFF_THREAD_MIN_BYTES);
        const bytes = new Uint8Array(arena);
        for (let offset = 0; offset < bytes.length; offset += 997) {
            bytes[offset] = offset % 253;
        }
        const hasher = new PageHasher(arena, 2);
        expect(hasher.numThreadsRunning).toBe(0);
        await hasher.start();
        await hasher.start();
        expect(hasher.numThreadsRunning).toBe(2);
        const jobs = [
            { byteOffset: 0, numBytes: OFF_THREAD_MIN_BYTES, tokenStart: 0 },
            { byteOffset: OFF_THREAD_MIN_BYTES, numBytes: OFF_THREAD_MIN_BYTES - 5, tokenStart: 256 }
        ];
        expect(await hasher.hash(jobs)).toEqual(
            jobs.map((job) => pageChecksum(bytes.subarray(job.byteOffset, job.byteOffset + job.numBytes), job.tokenStart))
        );
        expect(hasher.numThreadsRunning).toBe(2);
        hasher.dispose();
        await hasher.start();
        expect(hasher.numThreadsRunning).toBe(0);
    });

    it("zeroes the arena's bytes of each job on its threads and nothing around them, and refuses to when no thread runs", async () => {
        const arena = new SharedArrayBuffer(4 * OFF_THREAD_MIN_BYTES);
        const bytes = new Uint8Array(arena);
        bytes.fill(9);
        const hasher = new PageHasher(arena, 2);
        await expect(hasher.zero([{ byteOffset: 0, numBytes: 16 }])).rejects.toThrow(/no page thread is running to zero pages/);
        expect(bytes[0]).toBe(9);

        await hasher.start();
        const jobs = [
            { byteOffset: OFF_THREAD_MIN_BYTES, numBytes: OFF_THREAD_MIN_BYTES + 3 }, // more than a 1 MiB block of zeros
            { byteOffset: 3 * OFF_THREAD_MIN_BYTES, numBytes: 100 }
        ];
        await hasher.zero(jobs);
        const isZero = (start: number, end: number) => bytes.subarray(start, end).every((byte) => byte === 0);
        const isNine = (start: number, end: number) => bytes.subarray(start, end).every((byte) => byte === 9);
        expect(isNine(0, OFF_THREAD_MIN_BYTES)).toBe(true);
        expect(isZero(OFF_THREAD_MIN_BYTES, 2 * OFF_THREAD_MIN_BYTES + 3)).toBe(true);
        expect(isNine(2 * OFF_THREAD_MIN_BYTES + 3, 3 * OFF_THREAD_MIN_BYTES)).toBe(true);
        expect(isZero(3 * OFF_THREAD_MIN_BYTES, 3 * OFF_THREAD_MIN_BYTES + 100)).toBe(true);
        expect(isNine(3 * OFF_THREAD_MIN_BYTES + 100, 4 * OFF_THREAD_MIN_BYTES)).toBe(true);

        hasher.dispose();
        await expect(hasher.zero(jobs)).rejects.toThrow(/no page thread is running/);
    });
});
