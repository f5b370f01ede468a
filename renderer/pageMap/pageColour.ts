import type { PageStateName } from "../../contract/EngineSnapshot.js";

/** The page map's neutral colours, read from the stylesheet so they follow light and dark. */
export interface PageMapTheme {
    readonly background: string;
    readonly free: string;
    /** A page owned by no workspace this page knows (the HTTP API's, or one being released). */
    readonly unknownOwner: string;
    readonly hatch: string;
}

export const lightPageMapTheme: PageMapTheme = { background: "#ffffff", free: "#e4e7eb", unknownOwner: "#8a929c", hatch: "#1c1e21" };

/**
 * How much of the owner's colour each state shows over the background: a page darkens (in light
 * mode; brightens in dark) as it moves through its lifecycle. Quarantined pages are also hatched.
 */
export const stateStrength: Readonly<Record<PageStateName, number>> = {
    free: 0,
    reserved: 0.3,
    written: 0.6,
    sealed: 1,
    quarantined: 0.45
};

export interface PageFill {
    readonly colour: string;
    readonly hatched: boolean;
}

/** A page's fill: the theme's free colour, or its owner's colour at its state's strength. */
export function pageFill(state: PageStateName, ownerColour: string | undefined, theme: PageMapTheme): PageFill {
    if (state === "free") {
        return { colour: theme.free, hatched: false };
    }
    return { colour: mixHex(ownerColour ?? theme.unknownOwner, theme.background, stateStrength[state]), hatched: state === "quarantined" };
}

/** `amount` of `colour` over `background` (0 is the background, 1 the colour), as #rrggbb. */
export function mixHex(colour: string, background: string, amount: number): string {
    const from = parseHex(colour);
    const to = parseHex(background);
    const channel = (index: number): string =>
        Math.round(from[index]! * amount + to[index]! * (1 - amount))
            .toString(16)
            .padStart(2, "0");
    return `#${channel(0)}${channel(1)}${channel(2)}`;
}

/** `#rgb` or `#rrggbb` to [r, g, b]; anything else is an error in the caller's colours. */
export function parseHex(colour: string): [number, number, number] {
    const text = colour.trim();
    const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(text);
    const long = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(text);
    const parts = short !== null ? short.slice(1).map((digit) => digit + digit) : long?.slice(1);
    if (parts === undefined) {
        throw new Error(`"${colour}" is not a #rgb or #rrggbb colour.`);
    }
    return [parseInt(parts[0]!, 16), parseInt(parts[1]!, 16), parseInt(parts[2]!, 16)];
}
