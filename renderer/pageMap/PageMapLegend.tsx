import { Swatch } from "../workspaces/Swatch.js";
import type { Workspace } from "../workspaces/Workspace.js";
import { paletteColour } from "../workspaces/workspacePalette.js";
import { blockKindWords } from "./describeBlock.js";
import type { BlockKind } from "./kvSections.js";
import type { PageMapTheme } from "./pageColour.js";

/** The shapes, in the order a block goes through them; drawn in the neutral ink, since colour is the owner's alone. */
const shapes: readonly { kind: BlockKind; label: string }[] = [
    { kind: "held", label: "KV in a sequence" },
    { kind: "empty", label: "unused room" },
    { kind: "free", label: "free page (zeroed)" },
    { kind: "reserved", label: "reserved" },
    { kind: "written", label: "being written" },
    { kind: "sealed", label: "sealed" },
    { kind: "quarantined", label: "quarantined" }
];

/**
 * One legend for the whole map: a block's colour is its workspace's swatch (the same as in the
 * workspace list), its shape is its state.
 */
export function PageMapLegend({ theme, workspaces }: { readonly theme: PageMapTheme; readonly workspaces: readonly Workspace[] }) {
    return (
        <div className="page-map-legend-block">
            <ul className="page-map-legend" aria-label="Colours: whose KV">
                {workspaces.map((workspace) => (
                    <li key={workspace.id} data-legend-owner={workspace.id}>
                        <Swatch colour={paletteColour(workspace.colour).hex} />
                        <span>{workspace.name}</span>
                    </li>
                ))}
                <li data-legend-owner="other">
                    <Swatch colour={theme.unknownOwner} />
                    <span>another window or the API</span>
                </li>
            </ul>
            <ul className="page-map-legend" aria-label="Shapes: what state">
                {shapes.map((shape) => (
                    <li key={shape.kind} title={blockKindWords[shape.kind]} data-legend-shape={shape.kind}>
                        <ShapeGlyph kind={shape.kind} theme={theme} />
                        <span>{shape.label}</span>
                    </li>
                ))}
            </ul>
        </div>
    );
}

/** A block's shape as drawKvSection draws it, in SVG presentation attributes (the CSP forbids style attributes). */
function ShapeGlyph({ kind, theme }: { readonly kind: BlockKind; readonly theme: PageMapTheme }) {
    const ink = theme.unknownOwner;
    return (
        <svg className="swatch" width={12} height={12} viewBox="0 0 12 12" aria-hidden="true" focusable="false">
            {kind === "held" && <rect x="0" y="0" width="12" height="12" fill={ink} />}
            {kind === "empty" && <rect x="0.5" y="0.5" width="11" height="11" fill="none" stroke={theme.free} strokeWidth="1" />}
            {kind === "free" && <rect x="0" y="0" width="12" height="12" fill={theme.free} />}
            {kind === "reserved" && <rect x="0.5" y="0.5" width="11" height="11" fill="none" stroke={ink} strokeWidth="1" />}
            {kind === "written" && (
                <>
                    <rect x="0.5" y="0.5" width="11" height="11" fill="none" stroke={ink} strokeWidth="1" />
                    <rect x="0" y="6" width="12" height="6" fill={ink} />
                </>
            )}
            {kind === "sealed" && (
                <>
                    <rect x="0" y="0" width="12" height="12" fill={ink} />
                    <rect x="4" y="4" width="4" height="4" fill={theme.background} />
                </>
            )}
            {kind === "quarantined" && (
                <>
                    <rect x="0" y="0" width="12" height="12" fill={ink} />
                    <line x1="0" y1="12" x2="12" y2="0" stroke={theme.hatch} strokeWidth="1.5" />
                </>
            )}
        </svg>
    );
}
