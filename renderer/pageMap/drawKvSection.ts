import type { PageMapTheme } from "./pageColour.js";
import type { PageGridLayout } from "./pageGridLayout.js";
import type { Block, BlockKind } from "./kvSections.js";

/** Smallest cell (CSS pixels) that carries a state's mark; smaller cells are plain fills. */
const MIN_MARKED_CELL = 4;

/**
 * Draws one section's blocks. Colour is the owner's (its workspace swatch) and nothing else; the
 * state is the shape: solid for KV in a context, an outline for a reserved page, the lower half
 * for a page being written, a centre dot for a sealed one, a stripe for a quarantined one, the
 * neutral fill for a free (zeroed) page and a faint outline for room a sequence has not used.
 * Blocks are grouped by kind and owner first, so 65,536 pages cost a few dozen style changes.
 * `ownerColour` gives a workspace id's colour; undefined draws the theme's unknown-owner grey.
 */
export function drawKvSection(
    context: CanvasRenderingContext2D,
    layout: PageGridLayout,
    blockAt: (index: number) => Block,
    ownerColour: (owner: string) => string | undefined,
    theme: PageMapTheme,
    selected: number | undefined
): void {
    context.clearRect(0, 0, layout.width, layout.height);
    const groups = new Map<string, { kind: BlockKind; colour: string; cells: number[]; fills: number[] }>();
    for (let index = 0; index < layout.numPages; index++) {
        const block = blockAt(index);
        const key = `${block.kind}:${block.owner ?? ""}`;
        let group = groups.get(key);
        if (group === undefined) {
            const colour = block.owner === undefined ? theme.unknownOwner : (ownerColour(block.owner) ?? theme.unknownOwner);
            group = { kind: block.kind, colour, cells: [], fills: [] };
            groups.set(key, group);
        }
        group.cells.push(index);
        group.fills.push(block.fill);
    }
    const pitch = layout.cell + layout.gap;
    const size = layout.cell;
    const marked = size >= MIN_MARKED_CELL;
    for (const group of groups.values()) {
        const origin = (cell: number): [number, number] => [(cell % layout.columns) * pitch, Math.floor(cell / layout.columns) * pitch];
        if (group.kind === "empty" || (group.kind === "reserved" && marked)) {
            context.strokeStyle = group.kind === "empty" ? theme.free : group.colour;
            context.lineWidth = 1;
            context.beginPath();
            for (const cell of group.cells) {
                const [x, y] = origin(cell);
                context.rect(x + 0.5, y + 0.5, size - 1, size - 1);
            }
            context.stroke();
            continue;
        }
        context.fillStyle = group.kind === "free" ? theme.free : group.colour;
        group.cells.forEach((cell, at) => {
            const [x, y] = origin(cell);
            if (group.kind === "written" && marked) {
                context.fillRect(x, y + size / 2, size, size / 2);
            } else {
                context.fillRect(x, y, group.kind === "held" ? Math.max(1, size * group.fills[at]!) : size, size);
            }
        });
        if (!marked) {
            continue;
        }
        if (group.kind === "written") {
            context.strokeStyle = group.colour;
            context.lineWidth = 1;
            context.beginPath();
            group.cells.forEach((cell) => {
                const [x, y] = origin(cell);
                context.rect(x + 0.5, y + 0.5, size - 1, size - 1);
            });
            context.stroke();
        } else if (group.kind === "sealed") {
            context.fillStyle = theme.background;
            const dot = Math.max(1, Math.round(size / 3));
            for (const cell of group.cells) {
                const [x, y] = origin(cell);
                context.fillRect(x + (size - dot) / 2, y + (size - dot) / 2, dot, dot);
            }
        } else if (group.kind === "quarantined") {
            context.strokeStyle = theme.hatch;
            context.lineWidth = 1;
            context.beginPath();
            for (const cell of group.cells) {
                const [x, y] = origin(cell);
                context.moveTo(x, y + size);
                context.lineTo(x + size, y);
            }
            context.stroke();
        }
    }
    if (selected !== undefined && selected < layout.numPages) {
        context.strokeStyle = theme.hatch;
        context.lineWidth = 2;
        const x = (selected % layout.columns) * pitch;
        const y = Math.floor(selected / layout.columns) * pitch;
        context.strokeRect(x - 1, y - 1, size + 2, size + 2);
    }
}
