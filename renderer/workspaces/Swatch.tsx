/**
 * A small colour square. SVG presentation attributes carry the colour, which the page's CSP allows
 * (it forbids inline style attributes). `hatched` draws the quarantine stripe.
 */
export function Swatch({
    colour,
    hatched = false,
    hatchColour = "currentColor",
    size = 12
}: {
    readonly colour: string;
    readonly hatched?: boolean;
    readonly hatchColour?: string;
    readonly size?: number;
}) {
    return (
        <svg className="swatch" width={size} height={size} viewBox="0 0 12 12" aria-hidden="true" focusable="false">
            <rect x="0" y="0" width="12" height="12" rx="2" fill={colour} />
            {hatched && <line x1="0" y1="12" x2="12" y2="0" stroke={hatchColour} strokeWidth="1.5" />}
        </svg>
    );
}
