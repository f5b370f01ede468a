import { describe, expect, it } from "vitest";
import { takeLowestIndex } from "../../../../engine/runtime/takeLowestIndex.js";

describe("takeLowestIndex", () => {
    it("takes the item of the lowest index, whatever order the items are in, and leaves the rest", () => {
        const items = [5, 2, 7, 0, 3].map((index) => ({ index }));
        const taken: number[] = [];
        for (let item = takeLowestIndex(items); item !== undefined; item = takeLowestIndex(items)) {
            taken.push(item.index);
            expect(items.every((rest) => rest.index > item.index)).toBe(true);
        }
        expect(taken).toEqual([0, 2, 3, 5, 7]);
        expect(items).toEqual([]);
    });

    it("gives a released low index out again before higher ones freed earlier", () => {
        const items = [{ index: 3 }, { index: 1 }];
        items.push({ index: 0 });
        expect(takeLowestIndex(items)?.index).toBe(0);
        expect(takeLowestIndex(items)?.index).toBe(1);
        expect(takeLowestIndex([])).toBeUndefined();
    });
});
