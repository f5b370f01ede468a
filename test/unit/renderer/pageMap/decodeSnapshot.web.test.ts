import { describe, expect, it } from "vitest";
import { decodeBase64, decodeSnapshot, pageOwner, SnapshotDecodeError } from "../../../../renderer/pageMap/decodeSnapshot.js";
import { encodedSnapshot } from "./encodedSnapshot.js";

describe("decodeSnapshot", () => {
    it("decodes states and little-endian owner slots, and names each page's owner", () => {
        const decoded = decodeSnapshot(
            encodedSnapshot([0, 1, 3, 4, 3], [0, 1, 2, 0, 258], ["ui-a", "ui-b", ...Array.from({ length: 256 }, (_, index) => `w${index}`)])
        );
        expect(Array.from(decoded.pageMap.states)).toEqual([0, 1, 3, 4, 3]);
        expect(Array.from(decoded.pageMap.ownerSlots)).toEqual([0, 1, 2, 0, 258]);
        expect([0, 1, 2, 3, 4].map((page) => pageOwner(decoded.pageMap, page))).toEqual([undefined, "ui-a", "ui-b", undefined, "w255"]);
    });

    it("refuses arrays that disagree with the snapshot's own counts, saying which", () => {
        const snapshot = encodedSnapshot([0, 0], [0, 0], []);
        expect(() => decodeSnapshot({ ...snapshot, pageMap: { ...snapshot.pageMap, numPages: 3 } })).toThrow(
            new SnapshotDecodeError("The snapshot describes 3 pages but carries 2 states and 2 owner slots.")
        );
        expect(() => decodeSnapshot(encodedSnapshot([7], [0], []))).toThrow(/Page 0 has state 7/);
        expect(() => decodeSnapshot(encodedSnapshot([3], [2], ["only-one"]))).toThrow(/owner slot 2; the snapshot names 1 owners/);
    });

    it("refuses text that is not base64", () => {
        expect(() => decodeBase64("not base64!")).toThrow(SnapshotDecodeError);
    });
});
