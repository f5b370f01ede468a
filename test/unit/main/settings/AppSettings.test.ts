import { describe, expect, it } from "vitest";
import { InvalidRequestError } from "../../../../engine/request/requestErrors.js";
import { localApiPorts, parseLocalApiChange, toggledTheme } from "../../../../main/settings/AppSettings.js";

describe("parseLocalApiChange", () => {
    it("accepts {enabled, port}", () => {
        expect(parseLocalApiChange({ enabled: true, port: 8081 })).toEqual({ enabled: true, port: 8081 });
        expect(parseLocalApiChange({ enabled: false, port: localApiPorts.max })).toEqual({ enabled: false, port: 65_535 });
    });

    it.each([
        ["null", null, /takes \{enabled, port\}/],
        ["enabled as a string", { enabled: "true", port: 8080 }, /enabled must be true or false/],
        ["a missing port", { enabled: true }, /port is undefined/],
        ["a privileged port", { enabled: true, port: 443 }, /port is 443; choose a whole number from 1024 to 65535/],
        ["port 0", { enabled: true, port: 0 }, /port is 0/],
        ["NaN", { enabled: true, port: Number.NaN }, /port is NaN/],
        [
            "an extra field (the key is not the renderer's to set)",
            { enabled: true, port: 8080, apiKey: "mine-mine" },
            /takes no field "apiKey"/
        ]
    ])("refuses %s with invalid_request", (_, value, message) => {
        let caught: unknown;
        try {
            parseLocalApiChange(value);
        } catch (error) {
            caught = error;
        }
        expect(caught).toBeInstanceOf(InvalidRequestError);
        expect((caught as InvalidRequestError).message).toMatch(message);
    });
});

describe("toggledTheme", () => {
    it("switches to the other of light and dark from what shows now", () => {
        expect(toggledTheme(true)).toBe("light");
        expect(toggledTheme(false)).toBe("dark");
    });
});
