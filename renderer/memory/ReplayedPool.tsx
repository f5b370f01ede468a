import { useEffect, useRef } from "react";
import { pageStateNames } from "../../contract/EngineSnapshot.js";
import { countStates, type ReplayedPages } from "./replayPageStates.js";

/** Square cells of the replayed pool (CSS pixels); the canvas wraps them to its width. */
const CELL = 6;
/** One colour per page state, in `pageStateNames` order: free, reserved, written, sealed, quarantined. */
const STATE_COLOURS = ["#d9dde3", "#f2c14e", "#f08a4b", "#3a86ff", "#9b5de5"] as const;
const CANVAS_WIDTH = 720;

/**
 * The host pool as the scrubbed event left it: one cell a page, coloured by state (`drawn`: only
 * while scrubbing, as the page map above draws it live), and the counts in words.
 */
export function ReplayedPool({ pages, label, drawn }: { readonly pages: ReplayedPages; readonly label: string; readonly drawn: boolean }) {
    const canvasRef = useRef<HTMLCanvasElement>(null);
    const perRow = Math.max(1, Math.floor(CANVAS_WIDTH / CELL));
    const numRows = Math.ceil(pages.states.length / perRow);
    useEffect(() => {
        const context = drawn ? canvasRef.current?.getContext("2d") : undefined;
        if (!context) {
            return;
        }
        context.clearRect(0, 0, CANVAS_WIDTH, numRows * CELL);
        pages.states.forEach((state, page) => {
            context.fillStyle = STATE_COLOURS[state] ?? "#000";
            context.fillRect((page % perRow) * CELL, Math.floor(page / perRow) * CELL, CELL - 1, CELL - 1);
        });
    }, [pages, perRow, numRows, drawn]);
    const counts = countStates(pages.states);
    const words = pageStateNames.filter((name) => counts[name] > 0).map((name) => `${counts[name]} ${name}`);
    return (
        <figure className="replayed-pool">
            {drawn && <canvas ref={canvasRef} width={CANVAS_WIDTH} height={Math.max(CELL, numRows * CELL)} aria-hidden="true" />}
            <figcaption aria-label="Pool at the scrubbed event" data-sealed={counts.sealed} data-reserved={counts.reserved}>
                {label}: {words.join(", ")}
            </figcaption>
        </figure>
    );
}
