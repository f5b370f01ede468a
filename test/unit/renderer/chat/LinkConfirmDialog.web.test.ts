import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { LinkHost } from "../../../../renderer/chat/ExternalLinks.js";
import { LinkConfirmDialog } from "../../../../renderer/chat/LinkConfirmDialog.js";
import { linkAddress } from "../../../../renderer/chat/linkAddress.js";

const render = (url: string, host: LinkHost): string =>
    renderToStaticMarkup(createElement(LinkConfirmDialog, { address: linkAddress(url)!, host, onClose: () => undefined }));
const text = (html: string): string =>
    html
        .replace(/<[^>]+>/g, " ")
        .replace(/\s+/g, " ")
        .trim();

describe("LinkConfirmDialog", () => {
    it("names the host and shows the whole address of a web link before it opens in a new tab; Cancel first", () => {
        const html = render("https://docs.example/a?b=1&c=2#top", "browser");
        expect(text(html)).toBe(
            "Open docs.example in a new tab? The link in the chat goes to this address: https://docs.example/a?b=1&amp;c=2#top Cancel Open in new tab"
        );
        expect(html).toContain('aria-label="Cancel, do not open the link" autofocus=""');
        expect(html).toContain('aria-label="Open in a new tab"');
    });

    it("shows an internationalized host in its xn-- form, so a look-alike of a known name shows what it is", () => {
        expect(text(render("https://раураl.example/login", "browser"))).toContain("Open xn--l-7sba6dbr.example in a new tab?");
    });

    it("offers to write to a mail address in a browser, and to copy it in the desktop app, which opens only web addresses", () => {
        expect(text(render("mailto:someone@example.com", "browser"))).toBe(
            "Write to someone@example.com? Your mail app opens a new message to this address: someone@example.com Cancel Open mail app"
        );
        const desktop = render("mailto:someone@example.com", "desktop");
        expect(text(desktop)).toBe(
            "Copy the mail address? The desktop app opens only web addresses. Copy this address into your mail app: someone@example.com Close Copy"
        );
        expect(desktop).toContain('aria-label="Copy the mail address"');
    });
});
