import { pageStateNames } from "../../contract/EngineSnapshot.js";
import type { DecodedPageMap } from "./decodeSnapshot.js";
import { pageFill, type PageMapTheme } from "./pageColour.js";
import type { PageGridLayout } from "./pageGridLayout.js";

/**
 * Draws every page as a cell, coloured by owner and state (pageFill). Pages are grouped by fill
 * first, so 65,536 pages cost a handful of fillStyle changes, not one each.
 * `ownerColour` gives a workspace id's colour, or undefined for an owner this page does not know.
 */
export function drawPageMap(
    context: CanvasRenderingContext2D,
    layout: PageGridLayout,
    pageMap: DecodedPageMap,
    ownerColour: (owner: string) => string | undefined,
    theme: PageMapTheme,
    selectedPage: number | undefined
): void {
    context.clearRect(0, 0, layout.width, layout.height);
    const fills = new Map<string, { colour: string; hatched: boolean; pages: number[] }>();
    for (let page = 0; page < pageMap.numPages; page++) {
        const state = pageMap.states[page]!;
        const slot = pageMap.ownerSlots[page]!;
        const key = `${state}:${slot}`;
        let group = fills.get(key);
        if (group === undefined) {
            const owner = slot === 0 ? undefined : pageMap.owners[slot - 1];
            const fill = pageFill(pageStateNames[state]!, owner === undefined ? undefined : ownerColour(owner), theme);
            group = { ...fill, pages: [] };
            fills.set(key, group);
        }
        group.pages.push(page);
    }
    const pitch = layout.cell + layout.gap;
    for (const group of fills.values()) {
        context.fillStyle = group.colour;
        for (const page of group.pages) {
            context.fillRect((page % layout.columns) * pitch, Math.floor(page / layout.columns) * pitch, layout.cell, layout.cell);
        }
        if (group.hatched && layout.cell >= 4) {
            context.strokeStyle = theme.hatch;
            context.lineWidth = 1;
            context.beginPath();
            for (const page of group.pages) {
                const x = (page % layout.columns) * pitch;
                const y = Math.floor(page / layout.columns) * pitch;
                context.moveTo(x, y + layout.cell);
                context.lineTo(x + layout.cell, y);
            }
            context.stroke();
        }
    }
    if (selectedPage !== undefined && selectedPage < pageMap.numPages) {
        context.strokeStyle = theme.hatch;
        context.lineWidth = 2;
        const x = (selectedPage % layout.columns) * pitch;
        const y = Math.floor(selectedPage / layout.columns) * pitch;
        context.strokeRect(x - 1, y - 1, layout.cell + 2, layout.cell + 2);
    }
}
