import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useEngineStore } from "../stores/engineStore.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { formatCount } from "../util/formatCount.js";
import { paletteColour } from "../workspaces/workspacePalette.js";
import { formatBytes } from "./describeBlock.js";
import { kvSections, type KvSection } from "./kvSections.js";
import { KvSectionCanvas } from "./KvSectionCanvas.js";
import { ownerLabel } from "./ownerLabel.js";
import { PageMapLegend } from "./PageMapLegend.js";
import { sectionGridLayouts } from "./pageGridLayout.js";
import { PageOwnerTable } from "./PageOwnerTable.js";
import { PagePoolCanvas } from "./PagePoolCanvas.js";
import { RoleOccupancy } from "./RoleOccupancy.js";
import { summarizePageMap } from "./summarizePageMap.js";
import { usePageMapTheme } from "./usePageMapTheme.js";
import "./PageMap.css";

/** Tallest the blocks of all sections together grow before their cells shrink (CSS pixels), unless the view asks for more. */
const MAX_GRID_HEIGHT = 360;
/** Height a section's title and hint take beside its grid, counted when choosing the cell size. */
const SECTION_SPACING = 24;

/** The first section of each kind explains it, once, for a first-time user. */
const hints: Readonly<Record<KvSection["kind"], string>> = {
    prefill:
        "Prefill reads a long new message in one go, then hands its KV (the model's memory of the conversation) to decode through host pages.",
    pages: "A page holds the KV of a fixed number of token positions. Pages carry KV between contexts, and hold a workspace's KV while it is swapped out; every page is zeroed before it is reused, so no workspace can read another's.",
    decode: "Decode writes the answer one token at a time; each workspace's conversation lives in one decode sequence, growing a block at a time."
};

/**
 * All the KV memory the engine holds, one block per page-sized run of positions, coloured by the
 * workspace it belongs to: the prefill sequence, the host page pool, and every decode sequence.
 * Blocks are mirrored from the engine's snapshot, never kept here.
 */
export function PageMap({ maxGridHeight = MAX_GRID_HEIGHT }: { readonly maxGridHeight?: number }) {
    const snapshot = useEngineStore((state) => state.snapshot);
    const snapshotError = useEngineStore((state) => state.snapshotError);
    const snapshotLate = useEngineStore((state) => state.snapshotLate);
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const theme = usePageMapTheme();
    const wrapperRef = useRef<HTMLDivElement>(null);
    const [width, setWidth] = useState(0);

    const pageMap = snapshot?.pageMap;
    const sections = useMemo(() => (snapshot === undefined ? [] : kvSections(snapshot)), [snapshot]);
    const shape = sections.map((section) => section.numBlocks).join(",");
    const layouts = useMemo(
        () => (width > 0 ? sectionGridLayouts(shape.split(",").map(Number), width, maxGridHeight, SECTION_SPACING) : undefined),
        [shape, width, maxGridHeight]
    );
    const summary = useMemo(() => (pageMap === undefined ? undefined : summarizePageMap(pageMap)), [pageMap]);
    const colours = useMemo(
        () => new Map(workspaces.map((workspace) => [workspace.id, paletteColour(workspace.colour).hex])),
        [workspaces]
    );
    const ownerColour = useCallback((owner: string) => colours.get(owner), [colours]);
    const ownerName = useCallback((owner: string) => ownerLabel(owner, workspaces).name, [workspaces]);

    useEffect(() => {
        const wrapper = wrapperRef.current;
        if (wrapper === null) {
            return;
        }
        const observer = new ResizeObserver((entries) => setWidth(Math.floor(entries[0]?.contentRect.width ?? 0)));
        observer.observe(wrapper);
        return () => observer.disconnect();
    }, []);

    const explained = new Set<KvSection["kind"]>();
    return (
        <div className="page-map">
            {pageMap !== undefined && (
                <p className="page-map-geometry">
                    {formatCount(pageMap.numPages)} pages of {formatCount(pageMap.pageTokens)} tokens ({formatBytes(pageMap.pageBytes)}{" "}
                    each); {formatCount(pageMap.numActiveLeases)} active {pageMap.numActiveLeases === 1 ? "lease" : "leases"}
                </p>
            )}
            <PageMapLegend theme={theme} workspaces={workspaces} />
            {/* One line kept for the handoffs whether or not one runs, so the grids below do not jump (and repaint) as handoffs come and go. */}
            <div className="kv-handoffs-slot">
                {snapshot !== undefined && snapshot.handoffs.length > 0 && (
                    <p className="kv-handoffs" role="status">
                        {snapshot.handoffs
                            .map(
                                (handoff) =>
                                    `Handoff for ${ownerName(handoff.workspace)}: ${handoff.step} (into decode sequence ${handoff.decodeSequence + 1})`
                            )
                            .join("; ")}
                    </p>
                )}
            </div>
            <div className="page-map-grid" ref={wrapperRef}>
                {snapshot === undefined ? (
                    <p className="placeholder">{snapshotError ?? "Waiting for the engine's first snapshot…"}</p>
                ) : (
                    layouts !== undefined &&
                    sections.map((section, index) => {
                        const hint = explained.has(section.kind) ? undefined : hints[section.kind];
                        explained.add(section.kind);
                        const Section = section.kind === "pages" ? PagePoolCanvas : KvSectionCanvas;
                        return (
                            <Section
                                key={section.key}
                                snapshot={snapshot}
                                section={section}
                                layout={layouts[index]!}
                                hint={hint}
                                ownerColour={ownerColour}
                                ownerName={ownerName}
                                theme={theme}
                            />
                        );
                    })
                )}
            </div>
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
            {summary !== undefined && <PageOwnerTable summary={summary} workspaces={workspaces} theme={theme} />}
            {snapshot !== undefined && <RoleOccupancy snapshot={snapshot} workspaces={workspaces} theme={theme} />}
        </div>
    );
}
