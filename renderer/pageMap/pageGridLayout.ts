/** Where each page's cell is on the canvas, in CSS pixels: row-major, `columns` a row. */
export interface PageGridLayout {
    readonly numPages: number;
    readonly columns: number;
    readonly rows: number;
    /** A cell's side. */
    readonly cell: number;
    /** Space between cells. */
    readonly gap: number;
    /** The canvas's width: the width asked for; cells take `columns × (cell + gap) − gap` of it. */
    readonly width: number;
    readonly height: number;
}

/** Cell sides tried, largest first: a small pool gets big cells, 65,536 pages get 1-pixel ones. */
const CELL_SIZES = [18, 14, 12, 10, 8, 6, 5, 4, 3, 2, 1] as const;

/** The largest cells that fit `numPages` in `width` × `maxHeight`; at 1 pixel the grid grows taller instead. */
export function pageGridLayout(numPages: number, width: number, maxHeight: number): PageGridLayout {
    return sectionGridLayouts([numPages], width, maxHeight, 0)[0]!;
}

/**
 * Grids for several sections stacked one under another, all with the same cell (so a block is
 * the same size wherever it is drawn): the largest cell for which the grids, with `spacing` between
 * each, fit `maxHeight`; at 1 pixel they grow taller instead.
 */
export function sectionGridLayouts(numCells: readonly number[], width: number, maxHeight: number, spacing: number): PageGridLayout[] {
    const usableWidth = Math.max(1, Math.floor(width));
    for (const cell of CELL_SIZES) {
        const grids = numCells.map((count) => gridOf(count, usableWidth, cell));
        const height = grids.reduce((sum, grid) => sum + grid.height, 0) + spacing * Math.max(0, grids.length - 1);
        if (height <= maxHeight || cell === 1) {
            return grids;
        }
    }
    throw new Error("unreachable: the 1-pixel cell always fits");
}

function gridOf(numPages: number, width: number, cell: number): PageGridLayout {
    const gap = cell >= 6 ? 2 : cell >= 3 ? 1 : 0;
    const columns = Math.max(1, Math.floor((width + gap) / (cell + gap)));
    const rows = Math.max(1, Math.ceil(numPages / columns));
    const height = rows * (cell + gap) - gap;
    return { numPages, columns, rows, cell, gap, width, height };
}

/** The page under a point of the canvas (CSS pixels), a gap counting as the cell before it; undefined outside the pages. */
export function pageAtPoint(layout: PageGridLayout, x: number, y: number): number | undefined {
    if (x < 0 || y < 0 || x >= layout.width || y >= layout.height) {
        return undefined;
    }
    const column = Math.floor(x / (layout.cell + layout.gap));
    const row = Math.floor(y / (layout.cell + layout.gap));
    const page = row * layout.columns + column;
    return column < layout.columns && page < layout.numPages ? page : undefined;
}
