import fc from "fast-check";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { MarkdownBlock } from "../../../../renderer/chat/MarkdownBlock.js";
import { MarkdownBlockSplitter } from "../../../../renderer/chat/MarkdownBlockSplitter.js";

const split = (text: string): readonly string[] => new MarkdownBlockSplitter().split(text);
const renderBlock = (source: string): string => renderToStaticMarkup(createElement(MarkdownBlock, { source }));
/** The markup without the newlines remark puts between blocks (a cut leaves none there), wherever they touch a tag. */
const markup = (html: string): string => html.replace(/\n+(?=<)|(?<=>)\n+|^\n+|\n+$/g, "");

describe("MarkdownBlockSplitter", () => {
    it("cuts before every top-level block after a blank line, but the last, keeping every character", () => {
        const text = "# Title\n\nOne\ntwo\n\n\n- a\n- b\n\n> quoted\n\n| a |\n|---|\n| 1 |\n";
        expect(split(text)).toEqual(["# Title\n\n", "One\ntwo\n\n\n", "- a\n- b\n\n", "> quoted\n\n", "| a |\n|---|\n| 1 |\n"]);
        expect(split("# Title\nText right under it\n***\nMore\n")).toEqual(["# Title\nText right under it\n***\nMore\n"]);
        // micromark reads "2) two" after indented code as a paragraph, even past a blank line; on its own, as a list.
        expect(split("    indented code\n\n2) two\n\nText\n")).toEqual(["    indented code\n\n2) two\n\n", "Text\n"]);
    });

    it("keeps a fenced code block whole, blank lines and all, and cuts after it", () => {
        const text = "Code:\n\n```py\ndef f():\n\n\nreturn 1\n~~~\n```\n\nAfter.\n";
        expect(split(text)).toEqual(["Code:\n\n", "```py\ndef f():\n\n\nreturn 1\n~~~\n```\n\n", "After.\n"]);
        expect(split("````\n```\n\nstill code\n````\n\nout\n")).toEqual(["````\n```\n\nstill code\n````\n\n", "out\n"]);
        expect(split("```a`b\n\nnot a fence\n")).toEqual(["```a`b\n\n", "not a fence\n"]);
    });

    it("keeps a list whole across blank lines between items, indented continuations and code in an item", () => {
        expect(split("1. one\n\n2. two\n\n   more of two\n   ```sh\n   npm i\n\n   ```\n3. three\n\nAfter.\n")).toEqual([
            "1. one\n\n2. two\n\n   more of two\n   ```sh\n   npm i\n\n   ```\n3. three\n\n",
            "After.\n"
        ]);
        expect(split("Para\n\n- item\n")).toEqual(["Para\n\n", "- item\n"]);
    });

    it("keeps a raw HTML block whole across blank lines, as CommonMark reads it", () => {
        expect(split("<!-- a\n\nb -->\n\nText\n")).toEqual(["<!-- a\n\nb -->\n\n", "Text\n"]);
        expect(split("<pre>\n\n# not a heading\n</pre>\n\nText\n")).toEqual(["<pre>\n\n# not a heading\n</pre>\n\n", "Text\n"]);
        expect(split("</div>\n  ```\n\n  ```\n\n* item\n")).toEqual(["</div>\n  ```\n\n", "  ```\n\n* item\n"]);
    });

    it("keeps a text with a link or footnote definition anywhere in one block", () => {
        for (const text of [
            "See [the docs][d].\n\nMore.\n\n[d]: https://docs.example/\n",
            "A claim[^1].\n\nMore.\n\n[^1]: The source.\n",
            "- item\n\n  [d]: https://docs.example/\n\nText\n",
            "See [the docs][d].\n\nMore.\n\n[d]: https://docs.example/"
        ]) {
            expect(split(text), text).toEqual([text]);
        }
    });

    it("reads the last line only once it has ended: a streaming line may still continue a list", () => {
        const splitter = new MarkdownBlockSplitter();
        expect(splitter.split("1. a\n\n2")).toEqual(["1. a\n\n2"]);
        expect(splitter.split("1. a\n\n2. b\n")).toEqual(["1. a\n\n2. b\n"]);
        expect(splitter.split("1. a\n\n2. b\n\nText")).toEqual(["1. a\n\n2. b\n\nText"]);
        expect(splitter.split("1. a\n\n2. b\n\nText\n")).toEqual(["1. a\n\n2. b\n\n", "Text\n"]);
        expect(splitter.split("1. a\n\n2. b\n\nText\n\n[x]: /y")).toEqual(["1. a\n\n2. b\n\nText\n\n[x]: /y"]);
        expect(splitter.split("1. a\n\n2. b\n\nText\n\n[^x]: note")).toEqual(["1. a\n\n2. b\n\nText\n\n[^x]: note"]);
        expect(splitter.split("1. a\n\n2. b\n\nText\n\n[x]")).toEqual(["1. a\n\n2. b\n\n", "Text\n\n[x]"]);
    });

    it("reads \\r\\n and \\r as line ends, waiting for the \\n after a last \\r", () => {
        expect(split("One\r\n\r\nTwo\r\rThree\r\n")).toEqual(["One\r\n\r\n", "Two\r\r", "Three\r\n"]);
        expect(split("\r")).toEqual(["\r"]);
        const splitter = new MarkdownBlockSplitter();
        expect(splitter.split("```\r")).toEqual(["```\r"]);
        expect(splitter.split("```\r\n\r\nx\r\n")).toEqual(["```\r\n\r\nx\r\n"]);
    });

    it("starts again when the text is not an extension of the previous one", () => {
        const splitter = new MarkdownBlockSplitter();
        expect(splitter.split("```\n\ncode\n")).toEqual(["```\n\ncode\n"]);
        expect(splitter.split("Text\n\nMore\n")).toEqual(["Text\n\n", "More\n"]);
    });

    it("keeps the strings of finished blocks as they were while the text grows", () => {
        const splitter = new MarkdownBlockSplitter();
        const first = splitter.split("One\n\nTwo\n");
        const second = splitter.split("One\n\nTwo and more\n\nThree\n");
        expect(second[0]).toBe(first[0]);
        expect(second).toEqual(["One\n\n", "Two and more\n\n", "Three\n"]);
    });
});

// Lines that exercise what may and may not be cut: fences, lists, indentation, quotes, tables,
// definitions and HTML.
const lines = fc.constantFrom(
    "",
    "",
    "   ",
    "Text with *emphasis*",
    "More text",
    "# Heading",
    "Setext",
    "===",
    "---",
    "- item",
    "* item",
    "1. first",
    "2) second",
    "10. tenth",
    "  continued",
    "    indented code",
    "\tTabbed",
    "> quote",
    "```",
    "```ts",
    "~~~",
    "````",
    "  ```",
    "| a | b |",
    "|---|---|",
    "[ref]: https://example.com/",
    "[ref] used",
    "[^1]: note",
    "note[^1]",
    "<!--",
    "-->",
    "<div>",
    "</div>",
    "<pre>",
    "- [ ] task",
    "- ```",
    "  - nested",
    "   1. nested",
    "> - quoted list",
    "***",
    "-\tTab item",
    "-",
    "1.",
    "  ~~~",
    "<details>",
    "<span>x</span>",
    "Term: [link](https://example.com) and https://example.com/x"
);
const texts = fc
    .array(lines, { maxLength: 24 })
    .chain((picked) => fc.constantFrom("\n", "\r\n").map((end) => picked.join(end) + (picked.length % 3 === 0 ? end : "")));

describe("MarkdownBlockSplitter, on generated Markdown", () => {
    it("joins back to the text, and grows to the same blocks as a fresh split of the whole", () => {
        fc.assert(
            fc.property(texts, fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 1, maxLength: 24 }), (text, steps) => {
                expect(split(text).join("")).toBe(text);
                const splitter = new MarkdownBlockSplitter();
                let end = 0;
                for (const step of steps) {
                    end = Math.min(text.length, end + step);
                    const prefix = text.slice(0, end);
                    expect(splitter.split(prefix)).toEqual(split(prefix));
                }
                expect(splitter.split(text)).toEqual(split(text));
            }),
            { numRuns: 250 }
        );
    }, 60_000);

    it("renders block by block exactly as the whole text renders", () => {
        fc.assert(
            fc.property(texts, (text) => {
                const blocks = split(text);
                expect(markup(blocks.map(renderBlock).join(""))).toBe(markup(renderBlock(text)));
            }),
            { numRuns: 400 }
        );
    }, 60_000);
});
