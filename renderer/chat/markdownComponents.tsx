import type { ComponentProps } from "react";
import type { Components, ExtraProps } from "react-markdown";
import { CodeBlock } from "./CodeBlock.js";
import { MarkdownLink } from "./MarkdownLink.js";

/**
 * How MarkdownBlock renders the elements that need more than the tag. Headings move down two
 * levels (an answer's "#" is an h3): the page's h1 is Kvault's and h2 the workspace's, so the
 * page's outline stays whole; their look keeps the level written (md-h1 … md-h6).
 */
export const markdownComponents: Components = {
    a: MarkdownLink,
    pre: CodeBlock,
    h1: heading(1),
    h2: heading(2),
    h3: heading(3),
    h4: heading(4),
    h5: heading(5),
    h6: heading(6),
    table: ({ node: _node, ...props }: ComponentProps<"table"> & ExtraProps) => (
        // A wide table scrolls inside the message; the page itself never scrolls sideways.
        <div className="md-table-scroll" tabIndex={0} role="group" aria-label="Table">
            <table {...props} />
        </div>
    ),
    input: ({ node: _node, checked, ...props }: ComponentProps<"input"> & ExtraProps) => (
        // A task list's box: shown, never changed (the answer is what it is).
        <input {...props} checked={checked} disabled aria-label={checked === true ? "Done" : "Not done"} />
    ),
    // rehypeUntrustedContent has made every image a link; should one reach here, it is its alt text.
    img: ({ alt }: ComponentProps<"img"> & ExtraProps) => <span className="md-image-alt">{alt}</span>
};

function heading(level: 1 | 2 | 3 | 4 | 5 | 6) {
    const Tag = level === 1 ? "h3" : level === 2 ? "h4" : level === 3 ? "h5" : "h6";
    return function Heading({ node: _node, className, ...props }: ComponentProps<"h1"> & ExtraProps) {
        return <Tag {...props} className={className === undefined ? `md-h${level}` : `${className} md-h${level}`} />;
    };
}
