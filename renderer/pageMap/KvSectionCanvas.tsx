import { useEffect, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { formatCount } from "../util/formatCount.js";
import type { DecodedSnapshot } from "./decodeSnapshot.js";
import { describeBlock } from "./describeBlock.js";
import { drawKvSection } from "./drawKvSection.js";
import { blockFacts, blockOf, type KvSection } from "./kvSections.js";
import type { PageMapTheme } from "./pageColour.js";
import { pageAtPoint, type PageGridLayout } from "./pageGridLayout.js";

/** What a canvas of one KV section draws from: the section's grid, its words and its colours (the pool's canvas takes the same). */
export interface KvSectionCanvasProps {
    readonly snapshot: DecodedSnapshot;
    readonly section: KvSection;
    readonly layout: PageGridLayout;
    readonly hint: string | undefined;
    readonly ownerColour: (owner: string) => string | undefined;
    readonly ownerName: (owner: string) => string;
    readonly theme: PageMapTheme;
}

/**
 * One sequence's section of the map on its own canvas (the pool's is PagePoolCanvas): its title, a
 * line of explanation, the blocks, and the inspected block's words in a tooltip (hover, or focus
 * and the arrow keys).
 */
export function KvSectionCanvas({ snapshot, section, layout, hint, ownerColour, ownerName, theme }: KvSectionCanvasProps) {
    const canvasRef = useRef<HTMLCanvasElement>(null);
    const tooltipRef = useRef<HTMLDivElement>(null);
    const [inspected, setInspected] = useState<number>();
    const [pointer, setPointer] = useState<{ x: number; y: number }>();

    useEffect(() => {
        const canvas = canvasRef.current;
        const context = canvas?.getContext("2d");
        if (canvas == null || context == null) {
            return;
        }
        const scale = window.devicePixelRatio || 1;
        if (canvas.width !== Math.round(layout.width * scale) || canvas.height !== Math.round(layout.height * scale)) {
            canvas.width = Math.round(layout.width * scale);
            canvas.height = Math.round(layout.height * scale);
        }
        context.setTransform(scale, 0, 0, scale, 0, 0);
        drawKvSection(context, layout, (index) => blockOf(snapshot, section, index), ownerColour, theme, inspected);
    }, [snapshot, section, layout, ownerColour, theme, inspected]);

    useEffect(() => {
        // Positioned through the CSSOM, which the page's CSP allows (it forbids style attributes).
        const tooltip = tooltipRef.current;
        if (tooltip !== null && inspected !== undefined) {
            const pitch = layout.cell + layout.gap;
            const x = pointer?.x ?? (inspected % layout.columns) * pitch;
            const y = pointer?.y ?? Math.floor(inspected / layout.columns) * pitch;
            tooltip.style.left = `${Math.max(0, Math.min(x, layout.width - 220))}px`;
            tooltip.style.top = `${y + layout.cell + 6}px`;
        }
    }, [inspected, pointer, layout]);

    const inspect = (event: MouseEvent<HTMLCanvasElement>): void => {
        const rect = event.currentTarget.getBoundingClientRect();
        const scale = layout.width / rect.width;
        const x = (event.clientX - rect.left) * scale;
        const y = (event.clientY - rect.top) * scale;
        setPointer({ x, y });
        setInspected(pageAtPoint(layout, x, y));
    };

    const move = (event: KeyboardEvent<HTMLCanvasElement>): void => {
        const steps: Record<string, number> = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -layout.columns, ArrowDown: layout.columns };
        if (event.key === "Escape") {
            // clears the inspected block only; not the workspace's Stop (ChatView)
            event.preventDefault();
            setInspected(undefined);
            return;
        }
        const step = steps[event.key];
        if (step === undefined) {
            return;
        }
        event.preventDefault();
        setPointer(undefined);
        setInspected((index) => Math.min(layout.numPages - 1, Math.max(0, index === undefined ? 0 : index + step)));
    };

    const handoff = snapshot.handoffs[0];
    const words =
        inspected === undefined || inspected >= section.numBlocks
            ? undefined
            : describeBlock(section, inspected, blockFacts(snapshot, section, inspected), ownerName, handoff);
    const summary = sectionSummary(snapshot, section, ownerName);

    return (
        <section className="kv-section" data-section={section.key} data-kind={section.kind} aria-label={section.title}>
            <h4 className="kv-section-title">
                {section.title} <span className="kv-section-summary">{summary}</span>
            </h4>
            {hint !== undefined && <p className="kv-section-hint">{hint}</p>}
            <div className="kv-section-grid">
                <canvas
                    ref={canvasRef}
                    className="kv-sequence-canvas"
                    tabIndex={0}
                    role="img"
                    aria-label={`${section.title}: ${summary}`}
                    aria-describedby={words === undefined ? undefined : `${section.key}-tooltip`}
                    data-blocks={section.numBlocks}
                    data-held-blocks={section.sequence?.numBlocks ?? ""}
                    data-workspace={section.sequence?.workspace ?? ""}
                    onMouseMove={inspect}
                    onMouseLeave={() => setInspected(undefined)}
                    onKeyDown={move}
                    onBlur={() => setInspected(undefined)}
                />
                {words !== undefined && (
                    <div ref={tooltipRef} id={`${section.key}-tooltip`} className="kv-tooltip" role="tooltip">
                        {words}
                    </div>
                )}
            </div>
        </section>
    );
}

/** The section in one line: whose KV and how many positions, or how the pool's pages stand. */
function sectionSummary(snapshot: DecodedSnapshot, section: KvSection, ownerName: (owner: string) => string): string {
    const sequence = section.sequence;
    if (sequence === undefined) {
        const counts = snapshot.pageMap.numPagesByState;
        const inUse = snapshot.pageMap.numPages - counts.free;
        return `${formatCount(inUse)} of ${formatCount(snapshot.pageMap.numPages)} in use, ${formatCount(counts.sealed)} sealed, ${formatCount(counts.free)} free`;
    }
    if (sequence.workspace === undefined) {
        return `empty, room for ${formatCount(sequence.capacity)} tokens`;
    }
    return `${ownerName(sequence.workspace)}: ${formatCount(sequence.numTokens)} of ${formatCount(sequence.capacity)} tokens${sequence.running ? ", running" : ""}`;
}
