import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MessageText } from "../../../../renderer/chat/MessageText.js";

describe("MessageText", () => {
    it("renders model output as escaped text: markup in an answer never becomes HTML", () => {
        const html = renderToStaticMarkup(createElement(MessageText, { text: "<img src=x onerror=alert(1)> **bold** `<b>`" }));
        expect(html).not.toContain("<img");
        expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
        expect(html).toContain("<strong>bold</strong>");
        expect(html).toContain("<code>&lt;b&gt;</code>");
    });

    it("renders lists and code blocks as elements", () => {
        const html = renderToStaticMarkup(createElement(MessageText, { text: "- one\n- two\n\n```\nx < y\n```" }));
        expect(html).toBe(
            '<div class="message-text"><ul><li>one</li><li>two</li></ul><pre class="md-code"><code>x &lt; y</code></pre></div>'
        );
    });
});
