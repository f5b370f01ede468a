import { lightPageMapTheme, type PageMapTheme } from "./pageColour.js";

/** The page map's colours from the stylesheet's custom properties (App.css), which follow light and dark. */
export function readPageMapTheme(element: Element): PageMapTheme {
    const style = getComputedStyle(element);
    const read = (name: string, fallback: string): string => {
        const value = style.getPropertyValue(name).trim();
        return /^#[0-9a-f]{3}([0-9a-f]{3})?$/i.test(value) ? value : fallback;
    };
    return {
        background: read("--pagemap-background", lightPageMapTheme.background),
        free: read("--pagemap-free", lightPageMapTheme.free),
        unknownOwner: read("--pagemap-unknown-owner", lightPageMapTheme.unknownOwner),
        hatch: read("--pagemap-hatch", lightPageMapTheme.hatch)
    };
}
