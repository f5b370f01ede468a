import { describe, expect, it } from "vitest";
import type { EngineSnapshot } from "../../../../contract/EngineSnapshot.js";
import { kvByRole } from "../../../../engine/process/readResourceUse.js";

const BYTES_PER_TOKEN = 1_024;

function snapshotOf(sequences: EngineSnapshot["sequences"], free: number): Parameters<typeof kvByRole>[0] {
    return {
        bytesPerToken: BYTES_PER_TOKEN,
        roles: [
            { role: "prefill", numSequences: 1, numBusySequences: 0, sequenceCapacity: 512 },
            { role: "decode", numSequences: 2, numBusySequences: 1, sequenceCapacity: 256 }
        ],
        sequences,
        pool: { numPages: 96, numFreePages: free, pageBytes: 16 * BYTES_PER_TOKEN }
    };
}

describe("kvByRole", () => {
    it("counts each context's positions held and held-able, and the pool's pages not free, in bytes", () => {
        const snapshot = snapshotOf(
            [
                { role: "prefill", index: 0, capacity: 512, numTokens: 0, numBlocks: 0, running: false },
                { role: "decode", index: 0, capacity: 256, numTokens: 100, numBlocks: 7, workspace: "alice", running: true },
                { role: "decode", index: 1, capacity: 256, numTokens: 20, numBlocks: 2, workspace: "bob", running: false }
            ],
            90
        );
        expect(kvByRole(snapshot)).toEqual([
            { role: "prefill", usedBytes: 0, reservedBytes: 512 * BYTES_PER_TOKEN },
            { role: "decode", usedBytes: 120 * BYTES_PER_TOKEN, reservedBytes: 512 * BYTES_PER_TOKEN },
            { role: "pool", usedBytes: 6 * 16 * BYTES_PER_TOKEN, reservedBytes: 96 * 16 * BYTES_PER_TOKEN }
        ]);
    });
});
