import { describe, expect, it } from "vitest";
import { isAllowedNavigation, windowOptions } from "../../../../main/window/windowOptions.js";

const devAppUrl = "http://localhost:5173/";
const fileAppUrl = "file:///opt/Kvault/resources/app.asar/out/renderer/index.html";

describe("windowOptions", () => {
    const { webPreferences, show } = windowOptions("/opt/Kvault/out/preload/index.cjs");

    it("isolates and sandboxes the renderer, with no Node integration anywhere", () => {
        expect(webPreferences).toMatchObject({
            contextIsolation: true,
            sandbox: true,
            nodeIntegration: false,
            nodeIntegrationInWorker: false,
            nodeIntegrationInSubFrames: false
        });
    });

    it("keeps web security on and the risky extras off", () => {
        expect(webPreferences).toMatchObject({
            webSecurity: true,
            allowRunningInsecureContent: false,
            webviewTag: false,
            experimentalFeatures: false,
            navigateOnDragDrop: false
        });
    });

    it("loads the given preload and waits for ready-to-show", () => {
        expect(webPreferences?.preload).toBe("/opt/Kvault/out/preload/index.cjs");
        expect(show).toBe(false);
    });
});

describe("isAllowedNavigation from a dev server", () => {
    it.each([
        ["the app URL itself", devAppUrl],
        ["another path on the same origin", "http://localhost:5173/workspaces?id=1#top"],
        ["the origin without a trailing slash", "http://localhost:5173"]
    ])("allows %s", (_label, url) => {
        expect(isAllowedNavigation(url, devAppUrl)).toBe(true);
    });

    it.each([
        ["another host", "http://evil.example/"],
        ["another port", "http://localhost:5174/"],
        ["another scheme on the same host", "https://localhost:5173/"],
        ["a look-alike host", "http://localhost:5173.evil.example/"],
        ["credentials that hide another host", "http://localhost:5173@evil.example/"],
        ["a javascript: URL", "javascript:alert(1)"],
        ["a data: URL", "data:text/html,<script>alert(1)</script>"],
        ["about:blank", "about:blank"],
        ["a file: URL", fileAppUrl],
        ["an unparsable URL", "not a url"],
        ["an empty string", ""]
    ])("denies %s", (_label, url) => {
        expect(isAllowedNavigation(url, devAppUrl)).toBe(false);
    });
});

describe("isAllowedNavigation from the built app", () => {
    it.each([
        ["the app URL itself", fileAppUrl],
        ["the app page with a hash", `${fileAppUrl}#/workspaces/1`],
        ["the app page with a query", `${fileAppUrl}?debug=1`]
    ])("allows %s", (_label, url) => {
        expect(isAllowedNavigation(url, fileAppUrl)).toBe(true);
    });

    it.each([
        ["another file in the same folder", "file:///opt/Kvault/resources/app.asar/out/renderer/other.html"],
        ["a file elsewhere on disk", "file:///etc/passwd"],
        ["a path that climbs out and back", "file:///opt/Kvault/resources/app.asar/out/renderer/../renderer/../../secret.html"],
        ["a file on another host", "file://evil.example/opt/Kvault/resources/app.asar/out/renderer/index.html"],
        ["a web page", "http://evil.example/"],
        ["a javascript: URL", "javascript:alert(1)"],
        ["a data: URL", "data:text/html,hi"]
    ])("denies %s", (_label, url) => {
        expect(isAllowedNavigation(url, fileAppUrl)).toBe(false);
    });

    it("denies everything when the app URL itself is of an unknown scheme or unparsable", () => {
        expect(isAllowedNavigation("about:blank", "about:blank")).toBe(false);
        expect(isAllowedNavigation(devAppUrl, "not a url")).toBe(false);
    });
});
