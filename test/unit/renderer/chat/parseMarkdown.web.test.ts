import { describe, expect, it } from "vitest";
import { parseInline, parseMarkdown, showControlCharacters } from "../../../../renderer/chat/parseMarkdown.js";

describe("parseMarkdown", () => {
    it("reads paragraphs, headings, lists, quotes and code fences", () => {
        const blocks = parseMarkdown("# Title\n\nOne\ntwo\n\n- a\n- b\n1. x\n2) y\n> quoted\n```ts\nconst a = 1;\n```");
        expect(blocks.map((block) => block.kind)).toEqual(["heading", "paragraph", "list", "list", "quote", "code"]);
        expect(blocks[1]).toEqual({ kind: "paragraph", inlines: [{ kind: "text", text: "One\ntwo" }] });
        expect(blocks[2]).toMatchObject({ ordered: false, items: [[{ text: "a" }], [{ text: "b" }]] });
        expect(blocks[3]).toMatchObject({ ordered: true, items: [[{ text: "x" }], [{ text: "y" }]] });
        expect(blocks[5]).toEqual({ kind: "code", language: "ts", text: "const a = 1;" });
    });

    it("runs an unclosed fence to the end, as while an answer streams", () => {
        expect(parseMarkdown("```\nline 1\nline 2")).toEqual([{ kind: "code", language: "", text: "line 1\nline 2" }]);
    });

    it("keeps HTML and links as text: nothing is interpreted", () => {
        const source = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) <script>x</script>";
        expect(parseMarkdown(source)).toEqual([{ kind: "paragraph", inlines: [{ kind: "text", text: source }] }]);
    });
});

describe("parseInline", () => {
    it("reads code spans, bold and italics, and leaves lone markers alone", () => {
        expect(parseInline("a `b*c*` **d** *e* _f_ 2*3*4 snake_case_name")).toEqual([
            { kind: "text", text: "a " },
            { kind: "code", text: "b*c*" },
            { kind: "text", text: " " },
            { kind: "strong", text: "d" },
            { kind: "text", text: " " },
            { kind: "em", text: "e" },
            { kind: "text", text: " " },
            { kind: "em", text: "f" },
            { kind: "text", text: " 2*3*4 snake_case_name" }
        ]);
    });
});

describe("showControlCharacters", () => {
    it("shows control characters as their pictures and keeps newlines and tabs", () => {
        expect(showControlCharacters("a\u0004b\u0000\tc\n\u007f")).toBe("a\u2404b\u2400\tc\n\u2421");
    });
});
