import { describe, expect, it } from "vitest";
import {
    cellOnCanvas,
    clampViewport,
    gridPoint,
    maxZoom,
    panBy,
    pinchView,
    revealPage,
    WHOLE_MAP,
    zoomAround
} from "../../../../renderer/pageMap/mapViewport.js";
import { pageAtPoint, pageGridLayout } from "../../../../renderer/pageMap/pageGridLayout.js";

// 20,000 pages in 1,000 × 400 pixels: 4-pixel cells, 1-pixel gaps, 200 columns, 100 rows.
const layout = pageGridLayout(20_000, 1_000, 500);

describe("the pool's zoom and pan", () => {
    it("lays 20,000 pages out in 4-pixel cells that zoom to at most 64 pixels", () => {
        expect([layout.cell, layout.gap, layout.columns, layout.rows]).toEqual([4, 1, 200, 100]);
        expect(maxZoom(layout)).toBe(16);
    });

    it("zooms around the pointer: the page under it stays under it", () => {
        const point = [503, 251] as const;
        const before = pageAtPoint(layout, ...gridPoint(WHOLE_MAP, ...point));
        const zoomed = zoomAround(WHOLE_MAP, 4, ...point, layout);
        expect(zoomed.zoom).toBe(4);
        expect(pageAtPoint(layout, ...gridPoint(zoomed, ...point))).toBe(before);
        expect(before).toBe(50 * 200 + 100);
    });

    it("never zooms out past the whole map, nor in past the deepest zoom, nor pans off the grid", () => {
        expect(zoomAround(WHOLE_MAP, 0.5, 10, 10, layout)).toEqual(WHOLE_MAP);
        expect(zoomAround(WHOLE_MAP, 100, 10, 10, layout).zoom).toBe(16);
        const zoomed = zoomAround(WHOLE_MAP, 2, 0, 0, layout);
        expect(panBy(zoomed, 10_000, 10_000, layout)).toEqual({ zoom: 2, x: 0, y: 0 });
        expect(panBy(zoomed, -10_000, -10_000, layout)).toEqual({ zoom: 2, x: 500, y: layout.height / 2 });
        expect(clampViewport({ zoom: 0.2, x: -5, y: 900 }, layout)).toEqual(WHOLE_MAP);
    });

    it("drags the grid with the pointer, and reveals the keyboard's page when it is out of view", () => {
        const zoomed = zoomAround(WHOLE_MAP, 4, 0, 0, layout);
        const dragged = panBy(zoomed, -100, -40, layout);
        expect(cellOnCanvas(dragged, layout, 205)).toEqual([(5 * 5 - 25) * 4, (5 - 10) * 4]);
        const far = revealPage(zoomed, layout, 19_999);
        const [x, y] = cellOnCanvas(far, layout, 19_999);
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x + layout.cell * far.zoom).toBeLessThanOrEqual(layout.width);
        expect(y + layout.cell * far.zoom).toBeLessThanOrEqual(layout.height);
    });

    it("pinches: fingers spread twice as far zoom twice as deep around their midpoint, and the midpoint's move pans", () => {
        const from = [
            [400, 200],
            [500, 200]
        ] as const;
        const spread = pinchView(
            WHOLE_MAP,
            from,
            [
                [350, 200],
                [550, 200]
            ],
            layout
        );
        expect(spread.zoom).toBe(2);
        expect(pageAtPoint(layout, ...gridPoint(spread, 450, 200))).toBe(pageAtPoint(layout, 450, 200));
        const moved = pinchView(
            WHOLE_MAP,
            from,
            [
                [330, 180],
                [530, 180]
            ],
            layout
        );
        expect(pageAtPoint(layout, ...gridPoint(moved, 430, 180))).toBe(pageAtPoint(layout, 450, 200));
    });
});
