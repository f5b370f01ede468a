import { describe, expect, it } from "vitest";
import { pageStateNames } from "../../../../contract/EngineSnapshot.js";
import { lightPageMapTheme, mixHex, pageFill, parseHex } from "../../../../renderer/pageMap/pageColour.js";

const theme = lightPageMapTheme;

describe("pageFill", () => {
    it("draws free pages in the theme's free colour whoever owned them", () => {
        expect(pageFill("free", "#3b82f6", theme)).toEqual({ colour: theme.free, hatched: false });
    });

    it("strengthens the owner's colour from reserved through written to sealed, and hatches quarantine", () => {
        expect(pageFill("sealed", "#3b82f6", theme)).toEqual({ colour: "#3b82f6", hatched: false });
        const [reserved, written, sealed] = (["reserved", "written", "sealed"] as const).map((state) =>
            parseHex(pageFill(state, "#3b82f6", theme).colour)
        );
        expect(reserved![0]).toBeGreaterThan(written![0]);
        expect(written![0]).toBeGreaterThan(sealed![0]);
        expect(pageFill("quarantined", "#3b82f6", theme).hatched).toBe(true);
    });

    it("gives every state a distinct look for one owner, and an unknown owner the theme's neutral colour", () => {
        const looks = pageStateNames.map((state) => JSON.stringify(pageFill(state, "#ef4444", theme)));
        expect(new Set(looks).size).toBe(pageStateNames.length);
        expect(pageFill("sealed", undefined, theme).colour).toBe(theme.unknownOwner);
    });
});

describe("mixHex", () => {
    it("mixes two colours by amount, reading #rgb and #rrggbb", () => {
        expect(mixHex("#000000", "#ffffff", 0)).toBe("#ffffff");
        expect(mixHex("#000", "#fff", 1)).toBe("#000000");
        expect(mixHex("#ff0000", "#0000ff", 0.5)).toBe("#800080");
        expect(() => parseHex("red")).toThrow(/not a #rgb or #rrggbb colour/);
    });
});
