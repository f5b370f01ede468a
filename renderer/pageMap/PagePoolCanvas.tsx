import { Maximize, ZoomIn, ZoomOut } from "lucide-react";
import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type PointerEvent } from "react";
import { pageStateNames, type PageStateName } from "../../contract/EngineSnapshot.js";
import { formatCount } from "../util/formatCount.js";
import { blockKindWords, describeBlock } from "./describeBlock.js";
import type { KvSectionCanvasProps } from "./KvSectionCanvas.js";
import { blockFacts } from "./kvSections.js";
import {
    cellOnCanvas,
    clampViewport,
    gridPoint,
    maxZoom,
    PAN_FRACTION,
    panBy,
    pinchView,
    revealPage,
    WHOLE_MAP,
    ZOOM_STEP,
    zoomAround,
    type CanvasPoint,
    type MapViewport
} from "./mapViewport.js";
import type { PageMapTheme } from "./pageColour.js";
import { pageAtPoint, type PageGridLayout } from "./pageGridLayout.js";
import { livePoolPicture, poolPictureOf, type PoolPages } from "./poolPicture.js";
import { PoolPainter } from "./PoolPainter.js";
import { usePoolReplayStore, type PoolReplay } from "./poolReplayStore.js";

/** How much a wheel's pixel of scroll zooms (the exponent's rate); a pinch (the wheel with Ctrl) moves in smaller steps, so faster. */
const WHEEL_ZOOM_RATE = 0.002;
const PINCH_ZOOM_RATE = 0.01;
/** A press that moves less than this (CSS pixels) before it lets go is a click, not a drag. */
const DRAG_THRESHOLD = 3;

/**
 * The host page pool: its grid, which zooms (wheel, a trackpad's or two fingers' pinch, + and −,
 * 0 to reset) and pans (drag, Shift and the arrows); the inspected page's words in a tooltip (hover, or
 * focus and the arrows) at any zoom; and, while the timeline is scrubbed, the pool as that event
 * left it instead of the live one. Painted through PoolPainter, which repaints only changed pages.
 */
export function PagePoolCanvas({ snapshot, section, layout, hint, ownerColour, ownerName, theme }: KvSectionCanvasProps) {
    const canvasRef = useRef<HTMLCanvasElement>(null);
    const tooltipRef = useRef<HTMLDivElement>(null);
    const painter = useMemo(() => new PoolPainter(), []);
    const replay = usePoolReplayStore((state) => state.replay);
    const [wanted, setView] = useState<MapViewport>(WHOLE_MAP);
    const [inspected, setInspected] = useState<number>();
    const [pointer, setPointer] = useState<{ x: number; y: number }>();
    const drag = useRef<{ x: number; y: number; from: MapViewport; moved: boolean }>(undefined);
    /** The pointers down on the canvas (a touch screen's fingers), and a two-finger pinch's start. */
    const pointers = useRef(new Map<number, CanvasPoint>());
    const pinch = useRef<{ from: [CanvasPoint, CanvasPoint]; view: MapViewport }>(undefined);
    const view = clampViewport(wanted, layout);

    const { pageMap } = snapshot;
    const picture = useMemo(
        () => (replay === undefined ? livePoolPicture(pageMap, ownerColour, theme) : poolPictureOf(replay.pages, ownerColour, theme)),
        [pageMap, replay, ownerColour, theme]
    );

    // Painted once a frame however often snapshots, drags and wheels ask, with the newest of each.
    const latest = useRef({ picture, layout, theme, view, inspected, replay });
    latest.current = { picture, layout, theme, view, inspected, replay };
    const frame = useRef(0);
    useEffect(() => {
        if (frame.current !== 0) {
            return;
        }
        frame.current = requestAnimationFrame(() => {
            frame.current = 0;
            const canvas = canvasRef.current;
            if (canvas !== null) {
                paint(canvas, painter, latest.current);
            }
        });
    }, [painter, picture, layout, theme, view.zoom, view.x, view.y, inspected, replay]);
    useEffect(() => () => cancelAnimationFrame(frame.current), []);

    // React's wheel listeners are passive, and a zoom must keep the wheel from scrolling the view.
    useEffect(() => {
        const canvas = canvasRef.current;
        if (canvas === null) {
            return;
        }
        const onWheel = (event: WheelEvent): void => {
            const current = clampViewport(latest.current.view, layout);
            const delta = event.deltaMode === WheelEvent.DOM_DELTA_LINE ? event.deltaY * 16 : event.deltaY;
            if (delta === 0 || (delta > 0 && current.zoom <= 1)) {
                return; // nothing to zoom out of: the view scrolls as usual
            }
            event.preventDefault();
            const point = canvasPoint(canvas, layout, event.clientX, event.clientY);
            const factor = Math.exp(-delta * (event.ctrlKey ? PINCH_ZOOM_RATE : WHEEL_ZOOM_RATE));
            setView(zoomAround(current, factor, point.x, point.y, layout));
        };
        canvas.addEventListener("wheel", onWheel, { passive: false });
        return () => canvas.removeEventListener("wheel", onWheel);
    }, [layout]);

    useEffect(() => {
        // Positioned through the CSSOM, which the page's CSP allows (it forbids style attributes).
        const tooltip = tooltipRef.current;
        if (tooltip !== null && inspected !== undefined) {
            const [x, y] = pointer === undefined ? cellOnCanvas(view, layout, inspected) : [pointer.x, pointer.y];
            tooltip.style.left = `${Math.max(0, Math.min(x, layout.width - 220))}px`;
            tooltip.style.top = `${y + layout.cell * view.zoom + 6}px`;
        }
    }, [inspected, pointer, layout, view]);

    const pageUnder = (x: number, y: number): number | undefined => {
        const [gridX, gridY] = gridPoint(view, x, y);
        return pageAtPoint(layout, gridX, gridY);
    };

    const onPointerDown = (event: PointerEvent<HTMLCanvasElement>): void => {
        if (event.button !== 0) {
            return;
        }
        const point = canvasPoint(event.currentTarget, layout, event.clientX, event.clientY);
        event.currentTarget.setPointerCapture(event.pointerId);
        pointers.current.set(event.pointerId, [point.x, point.y]);
        const fingers = [...pointers.current.values()];
        if (fingers.length === 2) {
            pinch.current = { from: [fingers[0]!, fingers[1]!], view };
            drag.current = undefined;
        } else {
            drag.current = { ...point, from: view, moved: false };
        }
    };
    const onPointerMove = (event: PointerEvent<HTMLCanvasElement>): void => {
        const point = canvasPoint(event.currentTarget, layout, event.clientX, event.clientY);
        if (pointers.current.has(event.pointerId)) {
            pointers.current.set(event.pointerId, [point.x, point.y]);
        }
        const pinched = pinch.current;
        const fingers = [...pointers.current.values()];
        if (pinched !== undefined && fingers.length === 2) {
            setView(pinchView(pinched.view, pinched.from, [fingers[0]!, fingers[1]!], layout));
            return;
        }
        const dragged = drag.current;
        if (dragged !== undefined) {
            const dx = point.x - dragged.x;
            const dy = point.y - dragged.y;
            dragged.moved ||= Math.abs(dx) + Math.abs(dy) >= DRAG_THRESHOLD;
            if (dragged.moved) {
                setView(panBy(dragged.from, dx, dy, layout));
            }
        }
        setPointer(point);
        setInspected(pageUnder(point.x, point.y));
    };
    const endDrag = (event: PointerEvent<HTMLCanvasElement>): void => {
        if (event.currentTarget.hasPointerCapture(event.pointerId)) {
            event.currentTarget.releasePointerCapture(event.pointerId);
        }
        pointers.current.delete(event.pointerId);
        pinch.current = undefined;
        drag.current = undefined;
    };

    const zoomBy = (factor: number): void => setView(zoomAround(view, factor, layout.width / 2, layout.height / 2, layout));
    const onKeyDown = (event: KeyboardEvent<HTMLCanvasElement>): void => {
        const arrows: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
        const arrow = arrows[event.key];
        if (event.key === "Escape") {
            // clears the inspected page only; not the workspace's Stop (ChatView)
            setInspected(undefined);
        } else if (event.key === "+" || event.key === "=") {
            zoomBy(ZOOM_STEP);
        } else if (event.key === "-" || event.key === "_") {
            zoomBy(1 / ZOOM_STEP);
        } else if (event.key === "0") {
            setView(WHOLE_MAP);
        } else if (arrow !== undefined && event.shiftKey) {
            setView(panBy(view, -arrow[0] * layout.width * PAN_FRACTION, -arrow[1] * layout.height * PAN_FRACTION, layout));
        } else if (arrow !== undefined) {
            const step = arrow[0] + arrow[1] * layout.columns;
            const next = Math.min(layout.numPages - 1, Math.max(0, inspected === undefined ? 0 : inspected + step));
            setPointer(undefined);
            setInspected(next);
            setView(revealPage(view, layout, next));
        } else {
            return;
        }
        event.preventDefault();
    };

    const words =
        inspected === undefined || inspected >= section.numBlocks
            ? undefined
            : replay === undefined
              ? describeBlock(section, inspected, blockFacts(snapshot, section, inspected), ownerName, snapshot.handoffs[0])
              : replayedPageWords(replay, inspected, ownerName);
    const pages: PoolPages = replay?.pages ?? { states: pageMap.states, owners: [] };
    const counts = replay === undefined ? pageMap.numPagesByState : countStates(replay.pages.states);
    const summary = `${formatCount(pageMap.numPages - counts.free)} of ${formatCount(pageMap.numPages)} in use, ${formatCount(counts.sealed)} sealed, ${formatCount(counts.free)} free`;
    const zoomed = view.zoom > 1;

    return (
        <section
            className="kv-section"
            data-section={section.key}
            data-kind={section.kind}
            data-replay={replay === undefined ? "" : replay.event.seq}
            aria-label={section.title}
        >
            <div className="kv-section-header">
                <h4 className="kv-section-title">
                    {section.title} <span className="kv-section-summary">{summary}</span>
                </h4>
                <div className="page-map-zoom" role="group" aria-label="Zoom the host pages">
                    <button type="button" aria-label="Zoom out of the host pages" disabled={!zoomed} onClick={() => zoomBy(1 / ZOOM_STEP)}>
                        <ZoomOut size={14} aria-hidden="true" />
                    </button>
                    <span className="page-map-zoom-level" aria-label="Zoom">
                        {view.zoom < 10 ? view.zoom.toFixed(1) : Math.round(view.zoom)}×
                    </span>
                    <button
                        type="button"
                        aria-label="Zoom into the host pages"
                        disabled={view.zoom >= maxZoom(layout)}
                        onClick={() => zoomBy(ZOOM_STEP)}
                    >
                        <ZoomIn size={14} aria-hidden="true" />
                    </button>
                    <button
                        type="button"
                        aria-label="Show the whole pool (reset the zoom)"
                        disabled={!zoomed}
                        onClick={() => setView(WHOLE_MAP)}
                    >
                        <Maximize size={14} aria-hidden="true" /> Whole pool
                    </button>
                </div>
            </div>
            <p
                className={replay === undefined ? "page-map-moment" : "page-map-moment page-map-replaying"}
                aria-label="Pool at the scrubbed event"
                data-sealed={counts.sealed}
                data-reserved={counts.reserved}
                role="status"
            >
                {replay === undefined ? "Pool now" : replay.label}: {stateWords(counts)}
                {replay?.step !== undefined && <span className="page-map-step"> — {replay.step}</span>}
            </p>
            {hint !== undefined && <p className="kv-section-hint">{hint}</p>}
            <div className="kv-section-grid">
                <canvas
                    ref={canvasRef}
                    className={zoomed ? "page-map-canvas page-map-canvas-zoomed" : "page-map-canvas"}
                    tabIndex={0}
                    role="img"
                    aria-label={`${section.title}: ${summary}. Wheel or + and − zoom, drag or Shift and the arrows pan, 0 shows the whole pool.`}
                    aria-describedby={words === undefined ? undefined : `${section.key}-tooltip`}
                    data-blocks={section.numBlocks}
                    data-columns={layout.columns}
                    data-pitch={layout.cell + layout.gap}
                    data-zoom={view.zoom.toFixed(3)}
                    data-view-x={view.x.toFixed(1)}
                    data-view-y={view.y.toFixed(1)}
                    onPointerDown={onPointerDown}
                    onPointerMove={onPointerMove}
                    onPointerUp={endDrag}
                    onPointerCancel={endDrag}
                    onMouseLeave={() => drag.current === undefined && setInspected(undefined)}
                    onKeyDown={onKeyDown}
                    onBlur={() => setInspected(undefined)}
                />
                {words !== undefined && (
                    <div ref={tooltipRef} id={`${section.key}-tooltip`} className="kv-tooltip" role="tooltip">
                        {words}
                    </div>
                )}
            </div>
            <p className="page-details" aria-label="Page details">
                {inspected === undefined
                    ? "Point at a page, or focus the pool and use the arrow keys, to see its details."
                    : shortPageWords(pages, pageMap.owners, pageMap.ownerSlots, replay !== undefined, inspected, ownerName)}
            </p>
        </section>
    );
}

/** Sizes the canvas to the layout, copies the pool's bitmap at the view, then outlines the scrubbed event's pages and the inspected one. */
function paint(
    canvas: HTMLCanvasElement,
    painter: PoolPainter,
    {
        picture,
        layout,
        theme,
        view,
        inspected,
        replay
    }: {
        picture: ReturnType<typeof livePoolPicture>;
        layout: PageGridLayout;
        theme: PageMapTheme;
        view: MapViewport;
        inspected: number | undefined;
        replay: PoolReplay | undefined;
    }
): void {
    const scale = window.devicePixelRatio || 1;
    const width = Math.round(layout.width * scale);
    const height = Math.round(layout.height * scale);
    if (canvas.width !== width || canvas.height !== height) {
        canvas.width = width;
        canvas.height = height;
    }
    painter.update(picture, layout, theme, scale);
    painter.show(canvas, view, scale);
    const context = canvas.getContext("2d");
    if (context === null) {
        return;
    }
    context.setTransform(scale, 0, 0, scale, 0, 0);
    const size = layout.cell * view.zoom;
    const outline = (page: number, lineWidth: number): void => {
        const [x, y] = cellOnCanvas(view, layout, page);
        if (x + size >= 0 && y + size >= 0 && x <= layout.width && y <= layout.height) {
            context.lineWidth = lineWidth;
            context.strokeRect(x - lineWidth / 2, y - lineWidth / 2, size + lineWidth, size + lineWidth);
        }
    };
    context.strokeStyle = theme.hatch;
    for (const page of replay?.event.pages ?? []) {
        if (page < layout.numPages) {
            outline(page, 1);
        }
    }
    if (inspected !== undefined && inspected < layout.numPages) {
        outline(inspected, 2);
    }
}

/** The canvas point under a pointer's client position, in the layout's CSS pixels. */
function canvasPoint(canvas: HTMLCanvasElement, layout: PageGridLayout, clientX: number, clientY: number): { x: number; y: number } {
    const rect = canvas.getBoundingClientRect();
    const scale = rect.width === 0 ? 1 : layout.width / rect.width;
    return { x: (clientX - rect.left) * scale, y: (clientY - rect.top) * scale };
}

function countStates(states: Uint8Array): Record<PageStateName, number> {
    const counts = Object.fromEntries(pageStateNames.map((name) => [name, 0])) as Record<PageStateName, number>;
    for (const state of states) {
        counts[pageStateNames[state] ?? "free"]++;
    }
    return counts;
}

function stateWords(counts: Record<PageStateName, number>): string {
    return pageStateNames
        .filter((name) => counts[name] > 0)
        .map((name) => `${formatCount(counts[name])} ${name}`)
        .join(", ");
}

/**
 * A replayed page in words: its owner and state then, and for the scrubbed event's own pages the
 * generation and checksum the event recorded. Positions and bytes of an earlier moment are not kept.
 */
function replayedPageWords(replay: PoolReplay, page: number, ownerName: (owner: string) => string): string {
    const state = pageStateNames[replay.pages.states[page] ?? 0] ?? "free";
    const owner = replay.pages.owners[page];
    const parts = [`Host page ${formatCount(page)}`, owner === undefined ? "no owner" : `owner ${ownerName(owner)}`, blockKindWords[state]];
    const { event } = replay;
    const index = event.pages?.indexOf(page) ?? -1;
    if (index >= 0 && event.generation !== undefined) {
        parts.push(`generation ${formatCount(event.generation)}`);
    }
    const checksum = index >= 0 ? event.checksums?.[index] : undefined;
    if (checksum !== undefined) {
        parts.push(`checksum ${checksum}`);
    }
    parts.push(`as event #${formatCount(event.seq)} left it`);
    return `${parts.join(", ")}.`;
}

/** A host page in a few words: "Page 3: sealed, owner Notes." */
function shortPageWords(
    pages: PoolPages,
    liveOwners: readonly string[],
    ownerSlots: Uint16Array,
    replayed: boolean,
    page: number,
    ownerName: (owner: string) => string
): string {
    const state = pageStateNames[pages.states[page] ?? 0] ?? "free";
    const slot = ownerSlots[page] ?? 0;
    const owner = replayed ? pages.owners[page] : slot === 0 ? undefined : liveOwners[slot - 1];
    return `Page ${formatCount(page)}: ${state}, ${owner === undefined ? "no owner" : `owner ${ownerName(owner)}`}.`;
}
