import { pageStateNames } from "../../contract/EngineSnapshot.js";
import type { MapViewport } from "./mapViewport.js";
import type { PageMapTheme } from "./pageColour.js";
import type { PageGridLayout } from "./pageGridLayout.js";
import { codeColour, codeState, type PoolPicture } from "./poolPicture.js";

/** Smallest cell (CSS pixels) that carries a state's mark; smaller cells are plain fills (as drawKvSection's). */
const MIN_MARKED_CELL = 4;

/**
 * The pool's grid kept in a bitmap of its own, at the layout's size: each new picture repaints only
 * the pages whose state, owner or owner's colour changed since the last (every page after a layout,
 * scale or theme change), and the canvas on screen is the bitmap copied at the view's zoom and pan,
 * without smoothing, so a zoomed page is a larger block. Shapes as drawKvSection draws them: the owner's
 * colour, an outline for a reserved page, the lower half for a written one, a centre dot for a sealed
 * one, a stripe for a quarantined one, the theme's free fill for a free one.
 */
export class PoolPainter {
    readonly #bitmap = document.createElement("canvas");
    #codes: Uint32Array | undefined;
    #colours: readonly string[] = [];
    #layout: PageGridLayout | undefined;
    #theme: PageMapTheme | undefined;
    #scale = 0;

    /** Paints what changed from the last picture; returns how many pages it painted. */
    update(picture: PoolPicture, layout: PageGridLayout, theme: PageMapTheme, scale: number): number {
        const context = this.#bitmap.getContext("2d");
        if (context === null) {
            return 0;
        }
        const previous = this.#codes;
        const whole =
            previous?.length !== picture.codes.length || layout !== this.#layout || theme !== this.#theme || scale !== this.#scale;
        if (whole) {
            this.#bitmap.width = Math.round(layout.width * scale);
            this.#bitmap.height = Math.round(layout.height * scale);
        }
        context.setTransform(scale, 0, 0, scale, 0, 0);
        const recoloured = picture.colours.map((colour, index) => colour !== this.#colours[index]);
        const groups = new Map<number, number[]>();
        const { codes } = picture;
        for (let page = 0; page < codes.length && page < layout.numPages; page++) {
            const code = codes[page]!;
            if (whole || code !== previous![page] || recoloured[codeColour(code)] === true) {
                let group = groups.get(code);
                if (group === undefined) {
                    group = [];
                    groups.set(code, group);
                }
                group.push(page);
            }
        }
        let numPainted = 0;
        for (const [code, pages] of groups) {
            paintPages(context, layout, theme, code, picture.colours[codeColour(code)] ?? theme.unknownOwner, pages, !whole);
            numPainted += pages.length;
        }
        this.#codes = codes;
        this.#colours = picture.colours;
        this.#layout = layout;
        this.#theme = theme;
        this.#scale = scale;
        return numPainted;
    }

    /** Draws the bitmap onto `canvas` (already sized to the layout at `scale`) as `view` shows it. */
    show(canvas: HTMLCanvasElement, view: MapViewport, scale: number): void {
        const context = canvas.getContext("2d");
        if (context === null || this.#bitmap.width === 0 || this.#bitmap.height === 0) {
            return;
        }
        context.setTransform(1, 0, 0, 1, 0, 0);
        context.clearRect(0, 0, canvas.width, canvas.height);
        context.imageSmoothingEnabled = false;
        const width = this.#bitmap.width / view.zoom;
        const height = this.#bitmap.height / view.zoom;
        context.drawImage(this.#bitmap, view.x * scale, view.y * scale, width, height, 0, 0, canvas.width, canvas.height);
    }
}

/** Paints `pages`, all of one code; `clear` first empties their cells (a repaint over an earlier shape). */
function paintPages(
    context: CanvasRenderingContext2D,
    layout: PageGridLayout,
    theme: PageMapTheme,
    code: number,
    ownerColour: string,
    pages: readonly number[],
    clear: boolean
): void {
    const pitch = layout.cell + layout.gap;
    const size = layout.cell;
    const marked = size >= MIN_MARKED_CELL;
    const state = pageStateNames[codeState(code)] ?? "free";
    const colour = state === "free" ? theme.free : ownerColour;
    const corner = (page: number): [number, number] => [(page % layout.columns) * pitch, Math.floor(page / layout.columns) * pitch];
    if (clear) {
        for (const page of pages) {
            const [x, y] = corner(page);
            context.clearRect(x, y, size, size);
        }
    }
    context.fillStyle = colour;
    context.strokeStyle = colour;
    context.lineWidth = 1;
    if (state === "reserved" && marked) {
        context.beginPath();
        for (const page of pages) {
            const [x, y] = corner(page);
            context.rect(x + 0.5, y + 0.5, size - 1, size - 1);
        }
        context.stroke();
        return;
    }
    const half = state === "written" && marked;
    for (const page of pages) {
        const [x, y] = corner(page);
        if (half) {
            context.fillRect(x, y + size / 2, size, size / 2);
            context.strokeRect(x + 0.5, y + 0.5, size - 1, size - 1);
        } else {
            context.fillRect(x, y, size, size);
        }
    }
    if (!marked) {
        return;
    }
    if (state === "sealed") {
        context.fillStyle = theme.background;
        const dot = Math.max(1, Math.round(size / 3));
        for (const page of pages) {
            const [x, y] = corner(page);
            context.fillRect(x + (size - dot) / 2, y + (size - dot) / 2, dot, dot);
        }
    } else if (state === "quarantined") {
        context.strokeStyle = theme.hatch;
        context.beginPath();
        for (const page of pages) {
            const [x, y] = corner(page);
            context.moveTo(x, y + size);
            context.lineTo(x + size, y);
        }
        context.stroke();
    }
}
