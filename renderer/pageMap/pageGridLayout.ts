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
    const usableWidth = Math.max(1, Math.floor(width));
    for (const cell of CELL_SIZES) {
        const gap = cell >= 6 ? 2 : cell >= 3 ? 1 : 0;
        const columns = Math.max(1, Math.floor((usableWidth + gap) / (cell + gap)));
        const rows = Math.max(1, Math.ceil(numPages / columns));
        const height = rows * (cell + gap) - gap;
        if (height <= maxHeight || cell === 1) {
            return { numPages, columns, rows, cell, gap, width: usableWidth, height };
        }
    }
    throw new Error("unreachable: the 1-pixel cell always fits");
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
