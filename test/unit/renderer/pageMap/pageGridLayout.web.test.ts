import { describe, expect, it } from "vitest";
import { pageAtPoint, pageGridLayout } from "../../../../renderer/pageMap/pageGridLayout.js";

describe("pageGridLayout", () => {
    it("gives a small pool big cells", () => {
        expect(pageGridLayout(96, 300, 280)).toEqual({ numPages: 96, columns: 15, rows: 7, cell: 18, gap: 2, width: 300, height: 138 });
    });

    it("shrinks cells until the pool fits the height, and grows taller only at one pixel", () => {
        const medium = pageGridLayout(4_096, 300, 280);
        expect(medium.height).toBeLessThanOrEqual(280);
        expect(medium.rows * medium.columns).toBeGreaterThanOrEqual(4_096);
        const huge = pageGridLayout(65_536, 300, 280);
        expect(huge).toMatchObject({ cell: 1, gap: 0, columns: 300, rows: 219 });
    });
});

describe("pageAtPoint", () => {
    const layout = pageGridLayout(20, 100, 280); // 18-pixel cells, 2-pixel gaps, 5 a row

    it("finds the page under a point, a gap counting as the cell before it", () => {
        expect(layout.columns).toBe(5);
        expect(pageAtPoint(layout, 0, 0)).toBe(0);
        expect(pageAtPoint(layout, 19, 0)).toBe(0);
        expect(pageAtPoint(layout, 20, 0)).toBe(1);
        expect(pageAtPoint(layout, 45, 21)).toBe(7);
    });

    it("is undefined outside the grid and past the last page", () => {
        expect(pageAtPoint(layout, -1, 0)).toBeUndefined();
        expect(pageAtPoint(layout, 0, layout.height)).toBeUndefined();
        expect(pageAtPoint(pageGridLayout(7, 100, 280), 45, 21)).toBeUndefined();
    });
});
