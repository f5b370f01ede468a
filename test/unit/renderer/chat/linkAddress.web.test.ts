import { describe, expect, it } from "vitest";
import { linkAddress, markdownUrlTransform } from "../../../../renderer/chat/linkAddress.js";

describe("linkAddress", () => {
    it("takes absolute http and https addresses with a host, normalized as the URL parser does", () => {
        expect(linkAddress("https://docs.example/a b?c=1#d")).toEqual({
            kind: "web",
            href: "https://docs.example/a%20b?c=1#d",
            host: "docs.example"
        });
        expect(linkAddress("HTTP://Example.COM:8080")).toEqual({ kind: "web", href: "http://example.com:8080/", host: "example.com:8080" });
        // An internationalized host in its xn-- form, so a look-alike shows as what it is.
        expect(linkAddress("https://раураl.example/")).toMatchObject({ host: "xn--l-7sba6dbr.example" });
    });

    it("takes mailto addresses, with the recipient to show", () => {
        expect(linkAddress("mailto:someone@example.com?subject=Hi")).toEqual({
            kind: "mail",
            href: "mailto:someone@example.com?subject=Hi",
            to: "someone@example.com"
        });
        expect(linkAddress("mailto:")).toBeUndefined();
    });

    it("refuses every other scheme, relative addresses, and credentials that hide the real host", () => {
        for (const url of [
            "javascript:alert(1)",
            " javascript:alert(1)",
            "data:text/html,x",
            "file:///etc/passwd",
            "blob:https://example.com/1",
            "ftp://example.com/",
            "kvault://settings",
            "/settings",
            "./x",
            "#top",
            "//example.com/",
            "https://bank.example@evil.example/",
            "https://user:pass@example.com/",
            "http://",
            ""
        ]) {
            expect(linkAddress(url), url).toBeUndefined();
        }
    });
});

describe("markdownUrlTransform", () => {
    it("keeps a link's safe address, and no other URL attribute", () => {
        expect(markdownUrlTransform("https://example.com", "href")).toBe("https://example.com/");
        expect(markdownUrlTransform("javascript:alert(1)", "href")).toBeUndefined();
        expect(markdownUrlTransform("https://images.example/cat.png", "src")).toBeUndefined();
        expect(markdownUrlTransform("https://example.com/", "cite")).toBeUndefined();
    });
});
