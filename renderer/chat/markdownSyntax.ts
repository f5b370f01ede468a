import type { Root } from "mdast";
import type { Options } from "react-markdown";
import remarkGfm from "remark-gfm";
import remarkParse from "remark-parse";
import { unified } from "unified";

type PluggableList = NonNullable<Options["remarkPlugins"]>;

/**
 * The Markdown dialect of the chat, for react-markdown (MarkdownBlock) and for the block splitter
 * alike, so the two always read a text the same way: GitHub's (tables, task lists,
 * ~~strikethrough~~, autolinks, footnotes), but a single tilde is text, since answers write
 * "~5 minutes" far more often than they strike one word through.
 */
export const remarkPlugins: PluggableList = [[remarkGfm, { singleTilde: false }]];

const parser = unified().use(remarkParse).use(remarkPlugins).freeze();

/** `text` parsed as react-markdown parses it, before any transform: the syntax tree, with positions. */
export function parseMarkdownSyntax(text: string): Root {
    return parser.parse(text);
}
