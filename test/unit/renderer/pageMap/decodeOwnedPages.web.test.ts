import { describe, expect, it } from "vitest";
import { decodeSnapshot, pageDetails } from "../../../../renderer/pageMap/decodeSnapshot.js";
import { encodedSnapshot } from "./encodedSnapshot.js";

describe("decoding the owned pages' details", () => {
    const owned = [
        { generation: 7, tokenStart: 16, numTokens: 16, validBytes: 8_192, checksum: 0xdead_beef_0000_0001n },
        { generation: 9, tokenStart: 0, numTokens: 5, validBytes: 2_560, checksum: 0n }
    ];

    it("gives each page its generation, positions, bytes and, while sealed, its checksum", () => {
        const decoded = decodeSnapshot(encodedSnapshot([0, 3, 0, 2], [0, 1, 0, 2], ["ui-a", "ui-b"], owned));
        expect(pageDetails(decoded.pageMap, 0)).toEqual({ page: 0, state: "free", owner: undefined });
        expect(pageDetails(decoded.pageMap, 1)).toEqual({
            page: 1,
            state: "sealed",
            owner: "ui-a",
            generation: 7,
            tokenStart: 16,
            numTokens: 16,
            validBytes: 8_192,
            checksum: "deadbeef00000001"
        });
        expect(pageDetails(decoded.pageMap, 3)).toMatchObject({ state: "written", owner: "ui-b", generation: 9, numTokens: 5 });
        expect(pageDetails(decoded.pageMap, 3)).not.toHaveProperty("checksum");
        expect(pageDetails(decoded.pageMap, 4)).toBeUndefined();
    });

    it("refuses details that disagree with the pages that are not free, or with the page size, with the numbers", () => {
        const snapshot = encodedSnapshot([0, 3, 0, 2], [0, 1, 0, 2], ["ui-a", "ui-b"], owned);
        const { ownedPages } = snapshot.pageMap;
        expect(() => decodeSnapshot({ ...snapshot, pageMap: { ...snapshot.pageMap, ownedPages: { ...ownedPages, count: 1 } } })).toThrow(
            "The snapshot has 2 pages that are not free but details of 1."
        );
        const short = { ...ownedPages, generations: btoa("\u0007\u0000\u0000\u0000") };
        expect(() => decodeSnapshot({ ...snapshot, pageMap: { ...snapshot.pageMap, ownedPages: short } })).toThrow(
            "The snapshot's generations of 2 pages take 4 bytes; they must take 8 (4 each)."
        );
        const tooFull = encodedSnapshot([2], [1], ["ui-a"], [{ ...owned[0]!, numTokens: 17 }]);
        expect(() => decodeSnapshot(tooFull)).toThrow(
            "Page 0 holds 17 tokens in 8,192 bytes; a page holds at most 16 tokens in 8,192 bytes."
        );
    });
});
