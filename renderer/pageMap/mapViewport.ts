import type { PageGridLayout } from "./pageGridLayout.js";

/**
 * The part of the pool's grid its canvas shows: the grid scaled by `zoom` (1 shows all of it), with
 * the grid's point `x`, `y` (CSS pixels of the unzoomed grid) at the canvas's top-left corner.
 */
export interface MapViewport {
    readonly zoom: number;
    readonly x: number;
    readonly y: number;
}

export const WHOLE_MAP: MapViewport = { zoom: 1, x: 0, y: 0 };

/** The side a cell grows to at most when zoomed in (CSS pixels): closer shows nothing more of a page. */
export const MAX_ZOOMED_CELL = 64;
/** What one press of + or − (or a zoom button) multiplies the zoom by. */
export const ZOOM_STEP = 1.5;
/** What a fraction of the view one press of Shift and an arrow pans. */
export const PAN_FRACTION = 0.25;

/** The deepest zoom for `layout`: a cell `MAX_ZOOMED_CELL` pixels wide, and never less than the whole map. */
export function maxZoom(layout: PageGridLayout): number {
    return Math.max(1, MAX_ZOOMED_CELL / layout.cell);
}

/** `view` with its zoom within [1, maxZoom] and its corner where the canvas stays covered by the grid. */
export function clampViewport(view: MapViewport, layout: PageGridLayout): MapViewport {
    const zoom = clamp(view.zoom, 1, maxZoom(layout));
    return {
        zoom,
        x: clamp(view.x, 0, layout.width - layout.width / zoom),
        y: clamp(view.y, 0, layout.height - layout.height / zoom)
    };
}

/** `view` zoomed by `factor` around the canvas point `[px, py]` (CSS pixels): the grid under that point stays under it. */
export function zoomAround(view: MapViewport, factor: number, px: number, py: number, layout: PageGridLayout): MapViewport {
    const [gridX, gridY] = gridPoint(view, px, py);
    const zoom = clamp(view.zoom * factor, 1, maxZoom(layout));
    return clampViewport({ zoom, x: gridX - px / zoom, y: gridY - py / zoom }, layout);
}

/** `view` dragged by `[dx, dy]` canvas pixels: the grid moves with the pointer. */
export function panBy(view: MapViewport, dx: number, dy: number, layout: PageGridLayout): MapViewport {
    return clampViewport({ zoom: view.zoom, x: view.x - dx / view.zoom, y: view.y - dy / view.zoom }, layout);
}

/** The grid's point (unzoomed CSS pixels) under the canvas point `[px, py]`. */
export function gridPoint(view: MapViewport, px: number, py: number): [number, number] {
    return [view.x + px / view.zoom, view.y + py / view.zoom];
}

/** Where page `page`'s cell's top-left corner is on the canvas (CSS pixels), at `view`. */
export function cellOnCanvas(view: MapViewport, layout: PageGridLayout, page: number): [number, number] {
    const pitch = layout.cell + layout.gap;
    return [((page % layout.columns) * pitch - view.x) * view.zoom, (Math.floor(page / layout.columns) * pitch - view.y) * view.zoom];
}

/** `view` moved as little as it takes to show the whole of page `page`'s cell (the keyboard's inspected page). */
export function revealPage(view: MapViewport, layout: PageGridLayout, page: number): MapViewport {
    const pitch = layout.cell + layout.gap;
    const left = (page % layout.columns) * pitch;
    const top = Math.floor(page / layout.columns) * pitch;
    const width = layout.width / view.zoom;
    const height = layout.height / view.zoom;
    const x = left < view.x ? left : left + layout.cell > view.x + width ? left + layout.cell - width : view.x;
    const y = top < view.y ? top : top + layout.cell > view.y + height ? top + layout.cell - height : view.y;
    return clampViewport({ zoom: view.zoom, x, y }, layout);
}

function clamp(value: number, low: number, high: number): number {
    return Math.min(Math.max(value, low), Math.max(low, high));
}

/** A canvas point (CSS pixels). */
export type CanvasPoint = readonly [number, number];

/**
 * `start` after a two-finger pinch moved its fingers from `from` to `to`: zoomed by how far apart
 * they moved around their first midpoint, then panned by how far that midpoint moved.
 */
export function pinchView(
    start: MapViewport,
    from: readonly [CanvasPoint, CanvasPoint],
    to: readonly [CanvasPoint, CanvasPoint],
    layout: PageGridLayout
): MapViewport {
    const spread = (points: readonly [CanvasPoint, CanvasPoint]): number =>
        Math.hypot(points[1][0] - points[0][0], points[1][1] - points[0][1]);
    const middle = (points: readonly [CanvasPoint, CanvasPoint]): CanvasPoint => [
        (points[0][0] + points[1][0]) / 2,
        (points[0][1] + points[1][1]) / 2
    ];
    const before = spread(from);
    const factor = before === 0 ? 1 : spread(to) / before;
    const [fromX, fromY] = middle(from);
    const [toX, toY] = middle(to);
    return panBy(zoomAround(start, factor, fromX, fromY, layout), toX - fromX, toY - fromY, layout);
}
