import { describe, expect, it } from "vitest";
import type { SequenceUsage } from "../../../../contract/EngineSnapshot.js";
import { decodeSnapshot, SnapshotDecodeError } from "../../../../renderer/pageMap/decodeSnapshot.js";
import { describeBlock } from "../../../../renderer/pageMap/describeBlock.js";
import { blockFacts, blockOf, kvSections } from "../../../../renderer/pageMap/kvSections.js";
import { sectionGridLayouts } from "../../../../renderer/pageMap/pageGridLayout.js";
import { encodedSnapshot } from "./encodedSnapshot.js";

// pageTokens 16, bytesPerToken 512 (encodedSnapshot)
const sequence = (role: SequenceUsage["role"], index: number, numTokens: number, workspace?: string, running = false): SequenceUsage => ({
    role,
    index,
    capacity: 64,
    numTokens,
    numBlocks: Math.ceil(numTokens / 16),
    ...(workspace === undefined ? {} : { workspace }),
    running
});

const snapshot = decodeSnapshot(
    encodedSnapshot(
        [0, 3],
        [0, 1],
        ["ui-a"],
        [{ generation: 4, tokenStart: 32, numTokens: 16, validBytes: 8_192, checksum: 0xabcn }],
        [sequence("prefill", 0, 0), sequence("decode", 0, 37, "ui-a", true), sequence("decode", 1, 0)]
    )
);

describe("kvSections", () => {
    it("orders the map as KV travels: prefill, host pages, then each decode sequence, each sized by its capacity", () => {
        expect(kvSections(snapshot).map((section) => [section.title, section.numBlocks])).toEqual([
            ["Prefill", 4],
            ["Host pages", 2],
            ["Decode sequence 1", 4],
            ["Decode sequence 2", 4]
        ]);
    });

    it("numbers the prefill sequences when there are several, one per decode sequence", () => {
        const several = decodeSnapshot(
            encodedSnapshot(
                [0, 0],
                [0, 0],
                [],
                [],
                [sequence("prefill", 0, 0), sequence("prefill", 1, 20, "ui-a", true), sequence("decode", 0, 0)]
            )
        );
        expect(kvSections(several).map((section) => section.title)).toEqual([
            "Prefill sequence 1",
            "Prefill sequence 2",
            "Host pages",
            "Decode sequence 1"
        ]);
    });

    it("draws a sequence's positions as page-sized blocks of its workspace, the last one partial, then unused room", () => {
        const decode = kvSections(snapshot)[2]!;
        expect([0, 1, 2, 3].map((index) => blockOf(snapshot, decode, index))).toEqual([
            { kind: "held", owner: "ui-a", fill: 1 },
            { kind: "held", owner: "ui-a", fill: 1 },
            { kind: "held", owner: "ui-a", fill: 5 / 16 },
            { kind: "empty", owner: undefined, fill: 0 }
        ]);
        expect(blockFacts(snapshot, decode, 2)).toMatchObject({ positions: [32, 37], bytes: 5 * 512 });
    });

    it("says a block in words: owner, positions, bytes, state, and a page's generation and checksum", () => {
        const [, pages, decode] = kvSections(snapshot);
        const name = (owner: string): string => (owner === "ui-a" ? "Notes" : owner);
        expect(describeBlock(decode!, 2, blockFacts(snapshot, decode!, 2), name, undefined)).toBe(
            "Decode sequence 1, block 3, owner Notes, positions 32–36, 2.5 KiB, in use by a running turn."
        );
        expect(describeBlock(pages!, 1, blockFacts(snapshot, pages!, 1), name, undefined)).toBe(
            "Host page 1, owner Notes, positions 32–47, 8 KiB, sealed: checksummed, waiting to be read (a handoff in flight, or a workspace swapped out), generation 4, checksum 0000000000000abc."
        );
        expect(describeBlock(pages!, 0, blockFacts(snapshot, pages!, 0), name, undefined)).toBe(
            "Host page 0, no owner, 0 B, free: zeroed, on the free list."
        );
    });

    it("refuses a sequence whose blocks disagree with its positions, or whose positions have no workspace", () => {
        const base = encodedSnapshot([0], [0], []);
        expect(() => decodeSnapshot({ ...base, sequences: [{ ...sequence("decode", 0, 37, "ui-a"), numBlocks: 2 }] })).toThrow(
            new SnapshotDecodeError("The decode sequence 0 holds 37 positions in 2 blocks; blocks of 16 make 3.")
        );
        expect(() => decodeSnapshot({ ...base, sequences: [sequence("decode", 0, 65, "ui-a")] })).toThrow(
            "The decode sequence 0 holds 65 positions of its 64."
        );
        expect(() => decodeSnapshot({ ...base, sequences: [sequence("prefill", 0, 3)] })).toThrow(
            "The prefill sequence 0 holds 3 positions but names no workspace."
        );
    });
});

describe("sectionGridLayouts", () => {
    it("gives every section the same cell, the largest for which all fit the height with their spacing", () => {
        const grids = sectionGridLayouts([4, 256, 16, 16, 16, 16], 300, 360, 24);
        expect(new Set(grids.map((grid) => grid.cell)).size).toBe(1);
        const height = grids.reduce((sum, grid) => sum + grid.height, 0) + 24 * 5;
        expect(height).toBeLessThanOrEqual(360);
        const larger = sectionGridLayouts([4, 256, 16, 16, 16, 16], 300, height - 1, 24);
        expect(larger[0]!.cell).toBeLessThan(grids[0]!.cell);
    });

    it("lays out 20,000 blocks in small cells within the height, every block with its place", () => {
        const grids = sectionGridLayouts([128, 16_384, 128, 128, 128, 128], 300, 360, 24);
        expect(grids.every((grid) => grid.columns * grid.rows >= grid.numPages)).toBe(true);
        expect(grids[0]!.cell).toBeLessThanOrEqual(2);
        expect(grids.reduce((sum, grid) => sum + grid.height, 0) + 24 * 5).toBeLessThanOrEqual(360);
        const huge = sectionGridLayouts([65_536, 128], 300, 360, 24);
        expect(huge[0]).toMatchObject({ cell: 1, columns: 300, rows: 219 }); // taller than asked: 1 pixel is the floor
    });
});
