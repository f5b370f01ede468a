import { describe, expect, it } from "vitest";
import { InvalidRequestError } from "../../../../engine/request/requestErrors.js";
import {
    defaultAppSettings,
    localApiPorts,
    newApiKey,
    parseAppSettings,
    parseLocalApiChange,
    settingsDefaults,
    toggledTheme
} from "../../../../main/settings/AppSettings.js";

const key = (): string => "kv-test-key-0001";
const absoluteModel = process.platform === "win32" ? "C:\\models\\llama.gguf" : "/models/llama.gguf";

describe("parseAppSettings", () => {
    it("gives the defaults, and a new key, for an empty file", () => {
        expect(parseAppSettings({}, key)).toEqual({
            settings: {
                version: 1,
                localApi: { enabled: false, port: settingsDefaults.localApiPort, apiKey: "kv-test-key-0001" },
                modelPath: null,
                theme: "system"
            },
            problems: ["localApi is missing or not an object; using the defaults."]
        });
        expect(defaultAppSettings(key)).toEqual(parseAppSettings({}, key).settings);
    });

    it("keeps every usable field, with no problems", () => {
        const file = {
            version: 1,
            localApi: { enabled: true, port: 11434, apiKey: "my-own.key_1" },
            modelPath: absoluteModel,
            theme: "dark"
        };
        expect(parseAppSettings(file, key)).toEqual({ settings: file, problems: [] });
    });

    it("returns frozen settings (validated once, then frozen)", () => {
        const { settings } = parseAppSettings({ localApi: { enabled: true } }, key);
        expect(Object.isFrozen(settings)).toBe(true);
        expect(Object.isFrozen(settings.localApi)).toBe(true);
    });

    it("repairs each bad field on its own, and says which", () => {
        const { settings, problems } = parseAppSettings(
            {
                localApi: { enabled: "yes", port: 80, apiKey: "short" },
                modelPath: "relative/model.gguf",
                theme: "sepia"
            },
            key
        );
        expect(settings).toEqual({
            version: 1,
            localApi: { enabled: false, port: 8080, apiKey: "kv-test-key-0001" },
            modelPath: null,
            theme: "system"
        });
        expect(problems).toHaveLength(5);
        expect(problems.join("\n")).toMatch(/theme is "sepia", not "system", "light" or "dark"/);
        expect(problems.join("\n")).toMatch(/enabled is "yes"/);
        expect(problems.join("\n")).toMatch(/port is 80; it must be a whole number from 1024 to 65535/);
        expect(problems.join("\n")).toMatch(/apiKey/);
        expect(problems.join("\n")).toMatch(/modelPath is "relative\/model.gguf"/);
    });

    it.each([
        ["a port that is not whole", 8080.5],
        ["a port above 65535", 70_000],
        ["a port as a string", "8080"]
    ])("refuses %s", (_, port) => {
        expect(parseAppSettings({ localApi: { port } }, key).settings.localApi.port).toBe(settingsDefaults.localApiPort);
    });

    it.each([
        ["null", null],
        ["a list", []],
        ["a string", "settings"]
    ])("survives a file that holds %s", (_, value) => {
        const { settings, problems } = parseAppSettings(value, key);
        expect(settings).toEqual(defaultAppSettings(key));
        expect(problems).toEqual(["The settings are not a JSON object; using the defaults."]);
    });

    it("never echoes a huge value into the log", () => {
        const { problems } = parseAppSettings({ localApi: {}, modelPath: "x".repeat(1_000_000) }, key);
        expect(problems.join("").length).toBeLessThan(300);
    });
});

describe("newApiKey", () => {
    it("makes keys the local API accepts, different each time", () => {
        const first = newApiKey();
        expect(first).toMatch(/^kv-[0-9a-f]{48}$/);
        expect(newApiKey()).not.toBe(first);
        expect(parseAppSettings({ localApi: { apiKey: first } }, key).settings.localApi.apiKey).toBe(first);
    });
});

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
