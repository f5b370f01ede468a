import type { Nodes, RootContent } from "mdast";
import { parseMarkdownSyntax } from "./markdownSyntax.js";

/**
 * Cuts Markdown into top-level blocks that render one by one exactly as the whole text renders,
 * so that an answer streaming in re-renders only its last block: a finished block keeps its
 * string (the same object), and MarkdownBlock, memoized on it, is not parsed, highlighted or
 * reconciled again. Without this, every token would render the whole answer: O(n²) over an
 * answer of n characters.
 *
 * The cuts are the parser's own (react-markdown's, with the chat's plugins: markdownSyntax): a
 * top-level block is closed for good once the next one has started. So the text is cut before a
 * top-level block that follows a blank line, when that block read on its own is what it is in
 * the text, and only the open (last) block is parsed again as lines arrive. Indented code stays
 * with the blocks on either side: micromark keeps it open past blank lines, waiting for more,
 * and reads what follows it differently from the top of a text ("2) two" is a paragraph after
 * it, a list on its own). A line counts once it has ended ("\n", "\r\n" or "\r"): until then
 * a streaming line may still turn into a list item that continues a list. The one thing that
 * reaches across blocks is a definition, of a link reference or of a footnote: a text with one
 * is a single block.
 */
export class MarkdownBlockSplitter {
    private text = "";
    /** Offset where the open (last) block starts: always the start of a line. */
    private blockStart = 0;
    /** End of the complete lines parsed so far. */
    private parsedTo = 0;
    private finished: string[] = [];
    /** A definition was read: the text is one block for good. */
    private whole = false;

    /** The blocks of `text`, in order; joined they are `text`. Parses only the open block, when `text` extends the previous text. */
    split(text: string): readonly string[] {
        if (!text.startsWith(this.text)) {
            this.reset();
        }
        this.text = text;
        if (this.whole) {
            return [text];
        }
        const linesEnd = completeLinesEnd(text);
        if (linesEnd > this.parsedTo) {
            this.parsedTo = linesEnd;
            const tree = parseMarkdownSyntax(text.slice(this.blockStart, linesEnd));
            if (hasDefinition(tree)) {
                this.whole = true;
                return [text];
            }
            const offset = this.blockStart;
            for (const [index, child] of tree.children.entries()) {
                const before = tree.children[index - 1];
                if (
                    before === undefined ||
                    child.position!.start.line <= before.position!.end.line + 1 ||
                    isIndentedCode(text, offset, before) ||
                    isIndentedCode(text, offset, child)
                ) {
                    continue;
                }
                const childStart = offset + child.position!.start.offset!;
                const start = lineStart(text, childStart);
                if (readsAlike(text.slice(start, offset + child.position!.end.offset!), childStart - start, child)) {
                    this.finished.push(text.slice(this.blockStart, start));
                    this.blockStart = start;
                }
            }
        }
        // A definition on the unfinished last line joins the text already (the blocks before it
        // may use it); not for good, since the line may yet turn out to be something else.
        const unfinished = text.slice(linesEnd);
        if (unfinished.includes("]:") && hasDefinition(parseMarkdownSyntax(text.slice(this.blockStart)))) {
            return [text];
        }
        return [...this.finished, text.slice(this.blockStart)];
    }

    private reset(): void {
        this.blockStart = 0;
        this.parsedTo = 0;
        this.finished = [];
        this.whole = false;
    }
}

/** The offset after the last line end of `text`; a "\r" that ends it may be the first half of "\r\n", so its line has not ended yet. */
function completeLinesEnd(text: string): number {
    const last = text.endsWith("\r") ? text.length - 2 : text.length - 1;
    if (last < 0) {
        return 0;
    }
    return Math.max(text.lastIndexOf("\n", last), text.lastIndexOf("\r", last)) + 1;
}

/** The start of the line that `offset` is on. */
function lineStart(text: string, offset: number): number {
    return Math.max(text.lastIndexOf("\n", offset - 1), text.lastIndexOf("\r", offset - 1)) + 1;
}

/**
 * Whether `source` (from the start of the line `block` starts on to its end), read on its own,
 * is one top-level block like `block` (read after the blocks before it), from `lead` to the end.
 */
function readsAlike(source: string, lead: number, block: RootContent): boolean {
    const alone = parseMarkdownSyntax(source).children;
    const first = alone[0];
    return (
        alone.length === 1 &&
        first!.position!.start.offset === lead &&
        first!.position!.end.offset === source.length &&
        kind(first!) === kind(block)
    );
}

/** Whether a top-level block is indented code (four spaces in), rather than fenced. */
function isIndentedCode(text: string, offset: number, block: RootContent): boolean {
    if (block.type !== "code") {
        return false;
    }
    const first = text[offset + block.position!.start.offset!];
    return first !== "`" && first !== "~";
}

/** What a top-level block is, for readsAlike: its type, and how a list counts or a heading ranks. */
function kind(block: RootContent): string {
    if (block.type === "list") {
        return `list ${block.ordered === true ? `ordered from ${block.start ?? 1}` : "bulleted"}`;
    }
    return block.type === "heading" ? `heading ${block.depth}` : block.type;
}

function hasDefinition(node: Nodes): boolean {
    if (node.type === "definition" || node.type === "footnoteDefinition") {
        return true;
    }
    return "children" in node && node.children.some(hasDefinition);
}
