import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { pageStateNames } from "../../contract/EngineSnapshot.js";
import { useEngineStore } from "../stores/engineStore.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { formatCount } from "../util/formatCount.js";
import { paletteColour } from "../workspaces/workspacePalette.js";
import { pageOwner } from "./decodeSnapshot.js";
import { drawPageMap } from "./drawPageMap.js";
import { ownerLabel } from "./ownerLabel.js";
import { PageMapLegend } from "./PageMapLegend.js";
import { pageAtPoint, pageGridLayout } from "./pageGridLayout.js";
import { PageOwnerTable } from "./PageOwnerTable.js";
import { RoleOccupancy } from "./RoleOccupancy.js";
import { summarizePageMap } from "./summarizePageMap.js";
import { usePageMapTheme } from "./usePageMapTheme.js";
import "./PageMap.css";

/** Tallest the grid grows before its cells shrink (CSS pixels). */
const MAX_GRID_HEIGHT = 280;

/**
 * The page pool, live: one cell per page, in its owner's colour at its state's strength; the
 * contexts' sequences beside it; a page's details on hover or with the arrow keys.
 */
export function PageMap() {
    const snapshot = useEngineStore((state) => state.snapshot);
    const snapshotError = useEngineStore((state) => state.snapshotError);
    const snapshotLate = useEngineStore((state) => state.snapshotLate);
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const theme = usePageMapTheme();
    const wrapperRef = useRef<HTMLDivElement>(null);
    const canvasRef = useRef<HTMLCanvasElement>(null);
    const [width, setWidth] = useState(0);
    const [inspected, setInspected] = useState<number>();

    const pageMap = snapshot?.pageMap;
    const numPages = pageMap?.numPages ?? 0;
    const layout = useMemo(
        () => (numPages > 0 && width > 0 ? pageGridLayout(numPages, width, MAX_GRID_HEIGHT) : undefined),
        [numPages, width]
    );
    const summary = useMemo(() => (pageMap === undefined ? undefined : summarizePageMap(pageMap)), [pageMap]);

    useEffect(() => {
        const wrapper = wrapperRef.current;
        if (wrapper === null) {
            return;
        }
        const observer = new ResizeObserver((entries) => setWidth(Math.floor(entries[0]?.contentRect.width ?? 0)));
        observer.observe(wrapper);
        return () => observer.disconnect();
    }, []);

    useEffect(() => {
        const canvas = canvasRef.current;
        const context = canvas?.getContext("2d");
        if (canvas == null || context == null || layout === undefined || pageMap === undefined) {
            return;
        }
        const scale = window.devicePixelRatio || 1;
        if (canvas.width !== Math.round(layout.width * scale) || canvas.height !== Math.round(layout.height * scale)) {
            canvas.width = Math.round(layout.width * scale);
            canvas.height = Math.round(layout.height * scale);
        }
        context.setTransform(scale, 0, 0, scale, 0, 0);
        const colours = new Map(workspaces.map((workspace) => [workspace.id, paletteColour(workspace.colour).hex]));
        drawPageMap(context, layout, pageMap, (owner) => colours.get(owner), theme, inspected);
    }, [layout, pageMap, workspaces, theme, inspected]);

    const inspect = (event: MouseEvent<HTMLCanvasElement>): void => {
        if (layout === undefined) {
            return;
        }
        const rect = event.currentTarget.getBoundingClientRect();
        const scale = layout.width / rect.width;
        setInspected(pageAtPoint(layout, (event.clientX - rect.left) * scale, (event.clientY - rect.top) * scale));
    };

    const moveInspected = (event: KeyboardEvent<HTMLCanvasElement>): void => {
        if (layout === undefined) {
            return;
        }
        const steps: Record<string, number> = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -layout.columns, ArrowDown: layout.columns };
        if (event.key === "Escape") {
            // clears the inspected page only; not the workspace's Stop (ChatView)
            event.preventDefault();
            setInspected(undefined);
            return;
        }
        const step = steps[event.key];
        if (step === undefined) {
            return;
        }
        event.preventDefault();
        setInspected((page) => Math.min(layout.numPages - 1, Math.max(0, (page ?? 0) + (page === undefined ? 0 : step))));
    };

    const details = (() => {
        if (pageMap === undefined || inspected === undefined || inspected >= pageMap.numPages) {
            return "Point at a page, or focus the map and use the arrow keys, to see its details.";
        }
        const state = pageStateNames[pageMap.states[inspected]!]!;
        const owner = pageOwner(pageMap, inspected);
        const ownerText = owner === undefined ? "no owner" : `owner ${ownerLabel(owner, workspaces).name}`;
        return `Page ${formatCount(inspected)}: ${state}, ${ownerText}.`;
    })();

    return (
        <div className="page-map">
            {pageMap !== undefined && (
                <p className="page-map-geometry">
                    {formatCount(pageMap.numPages)} pages of {formatCount(pageMap.pageTokens)} tokens ({formatBytes(pageMap.pageBytes)}{" "}
                    each); {formatCount(pageMap.numActiveLeases)} active {pageMap.numActiveLeases === 1 ? "lease" : "leases"}
                </p>
            )}
            <div className="page-map-grid" ref={wrapperRef}>
                {pageMap === undefined ? (
                    <p className="placeholder">{snapshotError ?? "Waiting for the engine's first snapshot…"}</p>
                ) : (
                    <canvas
                        ref={canvasRef}
                        className="page-map-canvas"
                        tabIndex={0}
                        role="img"
                        aria-label={
                            summary === undefined
                                ? "Page map"
                                : `Page map: ${pageStateNames.map((state) => `${formatCount(summary.byState[state])} ${state}`).join(", ")}`
                        }
                        onMouseMove={inspect}
                        onMouseLeave={() => setInspected(undefined)}
                        onKeyDown={moveInspected}
                        onBlur={() => setInspected(undefined)}
                    />
                )}
            </div>
            <p className="page-details" aria-label="Page details">
                {details}
            </p>
            {snapshotError !== undefined && pageMap !== undefined && (
                <p className="inline-error" role="status">
                    Snapshot: {snapshotError}
                </p>
            )}
            {snapshotLate && pageMap !== undefined && (
                <p className="inline-error" role="status">
                    The engine has not answered for a moment (busy or restarting); this is its last known state.
                </p>
            )}
            <PageMapLegend theme={theme} />
            {summary !== undefined && <PageOwnerTable summary={summary} workspaces={workspaces} theme={theme} />}
            {snapshot !== undefined && <RoleOccupancy snapshot={snapshot} workspaces={workspaces} theme={theme} />}
        </div>
    );
}

function formatBytes(bytes: number): string {
    return bytes >= 1024 * 1024
        ? `${formatCount(Math.round((bytes / 1024 / 1024) * 10) / 10)} MiB`
        : bytes >= 1024
          ? `${formatCount(Math.round((bytes / 1024) * 10) / 10)} KiB`
          : `${formatCount(bytes)} B`;
}
