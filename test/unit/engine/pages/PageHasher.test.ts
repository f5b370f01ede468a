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
});
