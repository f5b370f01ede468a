import { describe, expect, it } from "vitest";
import type { EngineSnapshot, KvMemory } from "../../../../contract/EngineSnapshot.js";
import { kvByRole } from "../../../../engine/process/readResourceUse.js";

const BYTES_PER_TOKEN = 1_024;

function snapshotOf(
    sequences: EngineSnapshot["sequences"],
    free: number,
    kvMemory: KvMemory = { where: "ram", numLayersOnDevice: 0, numLayers: 2 }
): Parameters<typeof kvByRole>[0] {
    return {
        bytesPerToken: BYTES_PER_TOKEN,
        roles: [
            { role: "prefill", numSequences: 1, numBusySequences: 0, sequenceCapacity: 512, kvMemory },
            { role: "decode", numSequences: 2, numBusySequences: 1, sequenceCapacity: 256, kvMemory }
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
            { role: "prefill", usedBytes: 0, reservedBytes: 512 * BYTES_PER_TOKEN, where: "ram" },
            { role: "decode", usedBytes: 120 * BYTES_PER_TOKEN, reservedBytes: 512 * BYTES_PER_TOKEN, where: "ram" },
            { role: "pool", usedBytes: 6 * 16 * BYTES_PER_TOKEN, reservedBytes: 96 * 16 * BYTES_PER_TOKEN, where: "ram" }
        ]);
    });

    it("says where each holder's bytes are: the contexts' KV where the layers put it, the pool's pages in RAM", () => {
        const onDevice = kvByRole(snapshotOf([], 96, { where: "device", numLayersOnDevice: 2, numLayers: 2 }));
        expect(onDevice.map((holder) => [holder.role, holder.where])).toEqual([
            ["prefill", "device"],
            ["decode", "device"],
            ["pool", "ram"]
        ]);
    });
});
