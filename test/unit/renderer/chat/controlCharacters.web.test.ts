import { describe, expect, it } from "vitest";
import { showControlCharacters } from "../../../../renderer/chat/controlCharacters.js";

describe("showControlCharacters", () => {
    it("shows control characters as their pictures and keeps newlines, carriage returns and tabs", () => {
        expect(showControlCharacters("a\u0004b\u0000\tc\n\u007f\r")).toBe("a\u2404b\u2400\tc\n\u2421\r");
    });
});
