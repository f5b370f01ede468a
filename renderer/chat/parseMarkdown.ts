/**
 * The small, safe subset of Markdown that answers are shown with. Model output is untrusted: the
 * result is plain data that MessageText renders as React text nodes, so no HTML in an answer is
 * ever interpreted, and links stay text.
 */

export type InlineNode =
    | { readonly kind: "text"; readonly text: string }
    | { readonly kind: "code"; readonly text: string }
    | { readonly kind: "strong"; readonly text: string }
    | { readonly kind: "em"; readonly text: string };

export type MarkdownBlock =
    | { readonly kind: "paragraph"; readonly inlines: readonly InlineNode[] }
    | { readonly kind: "heading"; readonly level: 1 | 2 | 3; readonly inlines: readonly InlineNode[] }
    | { readonly kind: "code"; readonly language: string; readonly text: string }
    | { readonly kind: "quote"; readonly inlines: readonly InlineNode[] }
    | { readonly kind: "list"; readonly ordered: boolean; readonly items: readonly (readonly InlineNode[])[] };

const FENCE = /^\s{0,3}(```|~~~)\s*([\w+-]*)\s*$/;
const HEADING = /^\s{0,3}(#{1,3})\s+(.*)$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}\d{1,9}[.)]\s+(.*)$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;

/** Splits text into blocks. An unclosed code fence runs to the end (an answer still streaming). */
export function parseMarkdown(source: string): MarkdownBlock[] {
    const lines = source.replace(/\r\n?/g, "\n").split("\n");
    const blocks: MarkdownBlock[] = [];
    let paragraph: string[] = [];
    const flushParagraph = (): void => {
        if (paragraph.length > 0) {
            blocks.push({ kind: "paragraph", inlines: parseInline(paragraph.join("\n")) });
        }
        paragraph = [];
    };

    for (let index = 0; index < lines.length; index++) {
        const line = lines[index]!;
        const fence = FENCE.exec(line);
        if (fence !== null) {
            flushParagraph();
            const body: string[] = [];
            for (index++; index < lines.length && !lines[index]!.trimStart().startsWith(fence[1]!); index++) {
                body.push(lines[index]!);
            }
            blocks.push({ kind: "code", language: fence[2] ?? "", text: body.join("\n") });
            continue;
        }
        if (line.trim() === "") {
            flushParagraph();
            continue;
        }
        const heading = HEADING.exec(line);
        if (heading !== null) {
            flushParagraph();
            blocks.push({ kind: "heading", level: heading[1]!.length as 1 | 2 | 3, inlines: parseInline(heading[2]!) });
            continue;
        }
        const listMatch = BULLET.exec(line) ?? NUMBERED.exec(line);
        if (listMatch !== null) {
            flushParagraph();
            const ordered = BULLET.exec(line) === null;
            const pattern = ordered ? NUMBERED : BULLET;
            const items: InlineNode[][] = [];
            for (; index < lines.length; index++) {
                const item = pattern.exec(lines[index]!);
                if (item === null) {
                    break;
                }
                items.push(parseInline(item[1]!));
            }
            index--;
            blocks.push({ kind: "list", ordered, items });
            continue;
        }
        const quote = QUOTE.exec(line);
        if (quote !== null) {
            flushParagraph();
            const quoted: string[] = [];
            for (; index < lines.length; index++) {
                const next = QUOTE.exec(lines[index]!);
                if (next === null) {
                    break;
                }
                quoted.push(next[1]!);
            }
            index--;
            blocks.push({ kind: "quote", inlines: parseInline(quoted.join("\n")) });
            continue;
        }
        paragraph.push(line);
    }
    flushParagraph();
    return blocks;
}

const INLINE =
    /`([^`\n]+)`|\*\*([^*\n]+?)\*\*|__([^_\n]+?)__|(?<![\w*])\*([^*\s][^*\n]*?)\*(?![\w*])|(?<![\w_])_([^_\s][^_\n]*?)_(?![\w_])/g;

/** Code spans, bold and italics; everything else is text. */
export function parseInline(text: string): InlineNode[] {
    const nodes: InlineNode[] = [];
    let last = 0;
    for (const match of text.matchAll(INLINE)) {
        if (match.index > last) {
            nodes.push({ kind: "text", text: text.slice(last, match.index) });
        }
        const [, code, strong, strongUnderscore, em, emUnderscore] = match;
        if (code !== undefined) {
            nodes.push({ kind: "code", text: code });
        } else if (strong !== undefined || strongUnderscore !== undefined) {
            nodes.push({ kind: "strong", text: (strong ?? strongUnderscore)! });
        } else {
            nodes.push({ kind: "em", text: (em ?? emUnderscore)! });
        }
        last = match.index + match[0].length;
    }
    if (last < text.length) {
        nodes.push({ kind: "text", text: text.slice(last) });
    }
    return nodes;
}

/**
 * Control characters (a small model emits them) as their visible Unicode pictures, so an answer
 * never hides text from the reader; tabs and newlines stay. Copy gives the original text.
 */
export function showControlCharacters(text: string): string {
    // eslint-disable-next-line no-control-regex
    return text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, (char) =>
        char === "\u007F" ? "\u2421" : String.fromCharCode(0x2400 + char.charCodeAt(0))
    );
}
