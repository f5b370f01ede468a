import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MessageText } from "../../../../renderer/chat/MessageText.js";

const render = (text: string): string => renderToStaticMarkup(createElement(MessageText, { text }));

/** The elements' attributes in the markup (text is escaped, so a "<" there starts no tag). */
const attributes = (html: string): string[] =>
    [...html.matchAll(/<[a-z][\w-]*((?:\s[\w-]+(?:="[^"]*")?)*)\s*\/?>/g)].flatMap((tag) =>
        tag[1]!
            .trim()
            .split(/\s(?=[\w-]+(?:=|$))/)
            .filter(Boolean)
    );
const attributeNames = (html: string): Set<string> => new Set(attributes(html).map((attribute) => attribute.split("=")[0]!));
/** Every attribute that a browser would load or follow. */
const urlAttributes = (html: string): string[] =>
    attributes(html).filter((attribute) => /^(href|src|srcset|action|formaction|poster|data)=/.test(attribute));

describe("MessageText: model output is untrusted", () => {
    it("shows raw HTML as text: markup in an answer never becomes HTML", () => {
        const html = render("<img src=x onerror=alert(1)> **bold** `<b>`");
        expect(html).not.toContain("<img");
        expect(html).toContain("&lt;img src=x onerror=alert(1)&gt;");
        expect(html).toContain("<strong>bold</strong>");
        expect(html).toContain("<code>&lt;b&gt;</code>");
    });

    it("keeps a <script> block, an <img src=http://…>, an <iframe> and inline handlers inert", () => {
        const html = render(
            '<script>alert(1)</script>\n\nText <img src="http://tracker.example/pixel.png"> and <a href="javascript:alert(2)">x</a>\n\n<iframe src="https://evil.example/"></iframe>\n\n<div onclick="alert(3)">d</div>'
        );
        expect(html).not.toMatch(/<(script|img|iframe|div onclick)/i);
        expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
        expect(html).toContain("&lt;img src=&quot;http://tracker.example/pixel.png&quot;&gt;");
        expect(urlAttributes(html)).toEqual([]);
        expect([...attributeNames(html)].filter((name) => name.startsWith("on"))).toEqual([]);
    });

    it("never renders an <img>: a Markdown image is a link to its address, labelled with its alt text", () => {
        const html = render("![a cat](http://images.example/cat.png) and ![](https://images.example/dog.png)");
        expect(html).not.toContain("<img");
        expect(html).toContain('<a href="http://images.example/cat.png" class="md-image-link"');
        expect(html).toContain(">Image: a cat</a>");
        expect(html).toContain('<a href="https://images.example/dog.png" class="md-image-link"');
        expect(html).toContain(">Image</a>");
    });

    it("follows only http, https and mailto: a javascript:, data:, file: or relative link is text that names its address", () => {
        for (const address of [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
            "file:///etc/passwd",
            "/settings",
            "#top",
            "vbscript:msgbox(1)",
            "kvault://run",
            "https://user:password@bank.example/"
        ]) {
            const html = render(`[click here](<${address}>)`);
            expect(urlAttributes(html), address).toEqual([]);
            expect(html, address).not.toContain("<a");
            expect(html, address).toContain('<span class="md-link-refused"');
            expect(html, address).toContain("click here");
            expect(html, address).toContain("not a web address:");
        }
        const image = render("![x](javascript:alert(1))");
        expect(urlAttributes(image)).toEqual([]);
        expect(image).toContain("Image: x");
    });

    it("renders a web link with its whole address as its title, opening in a new tab without opener or referrer", () => {
        const html = render("[the docs](https://docs.example/a?b=1&c=2) and [mail](mailto:someone@example.com)");
        expect(html).toContain(
            '<a href="https://docs.example/a?b=1&amp;c=2" title="https://docs.example/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">the docs</a>'
        );
        expect(html).toContain(
            '<a href="mailto:someone@example.com" title="someone@example.com" target="_blank" rel="noopener noreferrer">mail</a>'
        );
        expect(urlAttributes(html)).toEqual(['href="https://docs.example/a?b=1&amp;c=2"', 'href="mailto:someone@example.com"']);
    });

    it("shows control characters as their pictures", () => {
        expect(render("a\u0004b\u0000c")).toBe('<div class="message-text"><p>a\u2404b\u2400c</p></div>');
    });
});

describe("MessageText: GitHub's Markdown", () => {
    it("renders lists and code blocks as elements", () => {
        const html = render("- one\n- two\n\n```\nx < y\n```");
        expect(html).toContain("<ul>\n<li>one</li>\n<li>two</li>\n</ul>");
        expect(html).toContain('<pre class="md-code"><code>x &lt; y\n</code></pre>');
    });

    it("renders a table with its columns' alignment, inside a region that scrolls sideways", () => {
        const html = render("| Name | Size |\n|:-----|-----:|\n| tiny | 0.9 MB |\n| small | 250 MB |");
        expect(html).toContain('<div class="md-table-scroll" tabindex="0" role="group" aria-label="Table"><table><thead><tr>');
        expect(html).toContain('<th style="text-align:left">Name</th><th style="text-align:right">Size</th>');
        expect(html).toContain('<tr><td style="text-align:left">small</td><td style="text-align:right">250 MB</td></tr>');
    });

    it("renders task lists with boxes that cannot be changed, named for screen readers", () => {
        const html = render("- [x] load the model\n- [ ] send a message");
        expect(html).toContain('<ul class="contains-task-list">');
        expect(html).toContain('<input type="checkbox" disabled="" aria-label="Done" checked=""/> load the model');
        expect(html).toContain('<input type="checkbox" disabled="" aria-label="Not done"/> send a message');
    });

    it("strikes through ~~double tildes~~ and leaves a single tilde as text", () => {
        expect(render("~~gone~~ in ~5 minutes, ~10 at most")).toBe(
            '<div class="message-text"><p><del>gone</del> in ~5 minutes, ~10 at most</p></div>'
        );
    });

    it("turns bare web and mail addresses into links", () => {
        const html = render("See https://example.com/x, www.example.org or write to someone@example.com.");
        expect(html).toContain('<a href="https://example.com/x" title="https://example.com/x"');
        expect(html).toContain('<a href="http://www.example.org/" title="http://www.example.org/"');
        expect(html).toContain('<a href="mailto:someone@example.com" title="someone@example.com"');
    });

    it("numbers nested lists right: an inner list does not restart or end the outer one", () => {
        const html = render("1. one\n2. two\n   1. inner a\n   2. inner b\n3. three\n\n- a\n  - b\n    - c");
        expect(html.replace(/\n/g, "")).toContain(
            "<ol><li>one</li><li>two<ol><li>inner a</li><li>inner b</li></ol></li><li>three</li></ol><ul><li>a<ul><li>b<ul><li>c</li></ul></li></ul></li></ul>"
        );
        expect(render("3. three\n4. four")).toContain('<ol start="3">');
    });

    it("renders every heading level, two levels down the page's outline, looking as written", () => {
        const html = render("# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six\n\nSetext\n======");
        expect(html.replace(/\n/g, "")).toBe(
            '<div class="message-text"><h3 class="md-h1">One</h3><h4 class="md-h2">Two</h4><h5 class="md-h3">Three</h5>' +
                '<h6 class="md-h4">Four</h6><h6 class="md-h5">Five</h6><h6 class="md-h6">Six</h6><h3 class="md-h1">Setext</h3></div>'
        );
    });

    it("renders quotes, emphasis, rules and hard breaks", () => {
        const html = render("> quoted *text*\n\n---\n\nline one  \nline two");
        expect(html).toContain("<blockquote>\n<p>quoted <em>text</em></p>\n</blockquote>");
        expect(html).toContain("<hr/>");
        expect(html).toContain("<p>line one<br/>\nline two</p>");
    });

    it("shows footnotes as plain text: no in-page links between messages", () => {
        const html = render("A claim[^1].\n\n[^1]: The source.");
        expect(html).toContain('<sup><span class="md-footnote-ref">1</span></sup>');
        expect(html).toContain('<h4 id="footnote-label" class="sr-only md-h2">Footnotes</h4>');
        expect(html).toContain("The source.");
        expect(urlAttributes(html)).toEqual([]);
    });
});

describe("MessageText: code", () => {
    it("highlights a fenced block in a known language and gives it a Copy button named for it", () => {
        const html = render("```ts\nconst a: number = 1; // note\n```");
        expect(html).toContain(
            '<div class="md-code-block" data-language="ts"><div class="md-code-header"><span class="md-code-language">ts</span>'
        );
        expect(html).toContain('<button type="button" class="link-button" aria-label="Copy the ts code">Copy</button>');
        expect(html).toContain('<code class="hljs language-ts"><span class="hljs-keyword">const</span>');
        expect(html).toContain('<span class="hljs-comment">// note</span>');
    });

    it("highlights languages by their usual aliases", () => {
        for (const [alias, keyword] of [
            ["python", "def"],
            ["py", "def"],
            ["js", "function"],
            ["sh", "if"],
            ["rust", "fn"],
            ["go", "func"]
        ] as const) {
            expect(render(`\`\`\`${alias}\n${keyword} x\n\`\`\``), alias).toContain(`<span class="hljs-keyword">${keyword}</span>`);
        }
    });

    it("leaves a block in an unknown language, or in none, as plain text with a Copy button", () => {
        const unknown = render("```klingon\nQapla'\n```");
        expect(unknown).toContain('aria-label="Copy the klingon code"');
        expect(unknown).not.toContain("hljs-");
        const plain = render("```\nif (a) { b(); }\n```\n\n    indented code");
        expect(plain.match(/aria-label="Copy the code"/g)).toHaveLength(2);
        expect(plain).not.toContain("hljs");
    });

    it("keeps a streaming answer's unclosed fence as code to the end", () => {
        const html = render("Here:\n\n```python\ndef f():\n\n    return 1");
        expect(html).toContain('<code class="hljs language-python"><span class="hljs-keyword">def</span>');
        expect(html).toContain('    <span class="hljs-keyword">return</span> <span class="hljs-number">1</span>');
    });
});
