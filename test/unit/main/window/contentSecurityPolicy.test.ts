import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { contentSecurityPolicy } from "../../../../main/window/contentSecurityPolicy.js";

const indexHtml = readFileSync(new URL("../../../../renderer/index.html", import.meta.url), "utf8");

function directives(policy: string): Map<string, string> {
    return new Map(
        policy.split("; ").map((directive) => {
            const [name = "", ...sources] = directive.split(" ");
            return [name, sources.join(" ")];
        })
    );
}

describe("contentSecurityPolicy", () => {
    it("in production allows only the app's own files, nothing inline, nothing remote", () => {
        const production = directives(contentSecurityPolicy("production"));
        expect(production.get("default-src")).toBe("'none'");
        expect(production.get("script-src")).toBe("'self'");
        expect(production.get("style-src")).toBe("'self'");
        expect(production.get("object-src")).toBe("'none'");
        expect(contentSecurityPolicy("production")).not.toMatch(/unsafe-|https?:|\*/);
    });

    it("in development relaxes only inline scripts and styles, for the dev server", () => {
        const production = directives(contentSecurityPolicy("production"));
        const development = directives(contentSecurityPolicy("development"));
        expect(development.get("script-src")).toBe("'self' 'unsafe-inline'");
        expect(development.get("style-src")).toBe("'self' 'unsafe-inline'");
        for (const [name, sources] of production) {
            if (name !== "script-src" && name !== "style-src") {
                expect(development.get(name), name).toBe(sources);
            }
        }
    });

    it("is what renderer/index.html carries in its meta tag", () => {
        const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]*)"/.exec(indexHtml);
        expect(meta?.[1]).toBe(contentSecurityPolicy("production"));
    });
});
