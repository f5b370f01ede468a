import { describe, expect, it } from "vitest";
import { nextFreeColour, paletteColour, workspacePalette } from "../../../../renderer/workspaces/workspacePalette.js";
import { parseSetting } from "../../../../renderer/workspaces/WorkspaceSettingsForm.js";

describe("workspacePalette", () => {
    it("has distinct #rrggbb colours with names", () => {
        expect(new Set(workspacePalette.map((colour) => colour.hex)).size).toBe(workspacePalette.length);
        for (const colour of workspacePalette) {
            expect(colour.hex).toMatch(/^#[0-9a-f]{6}$/);
        }
    });

    it("hands out unused colours first, then the least used", () => {
        expect(nextFreeColour([])).toBe(0);
        expect(nextFreeColour([0, 1, 3])).toBe(2);
        expect(nextFreeColour(workspacePalette.map((_, index) => index).concat([0]))).toBe(1);
    });

    it("wraps any stored index into the palette", () => {
        expect(paletteColour(workspacePalette.length + 1)).toBe(workspacePalette[1]);
        expect(paletteColour(-1)).toBe(workspacePalette.at(-1));
    });
});

describe("parseSetting", () => {
    it("accepts numbers in range (whole when asked) and nothing else", () => {
        expect(parseSetting("0.7", 0, 2, false)).toBe(0.7);
        expect(parseSetting("2.5", 0, 2, false)).toBeUndefined();
        expect(parseSetting("", 0, 2, false)).toBeUndefined();
        expect(parseSetting("12", 1, 100, true)).toBe(12);
        expect(parseSetting("1.5", 1, 100, true)).toBeUndefined();
        expect(parseSetting("abc", 1, 100, true)).toBeUndefined();
    });
});
