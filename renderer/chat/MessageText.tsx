import type { ReactNode } from "react";
import { parseMarkdown, showControlCharacters, type InlineNode, type MarkdownBlock } from "./parseMarkdown.js";

/** A message's text as safe minimal Markdown: every piece is a React text node, never HTML. */
export function MessageText({ text }: { readonly text: string }) {
    return <div className="message-text">{parseMarkdown(text).map(renderBlock)}</div>;
}

function renderBlock(block: MarkdownBlock, key: number): ReactNode {
    switch (block.kind) {
        case "paragraph":
            return <p key={key}>{renderInlines(block.inlines)}</p>;
        case "heading":
            return (
                <p key={key} className={`md-heading md-heading-${block.level}`}>
                    {renderInlines(block.inlines)}
                </p>
            );
        case "code":
            return (
                <pre key={key} className="md-code" data-language={block.language || undefined}>
                    <code>{showControlCharacters(block.text)}</code>
                </pre>
            );
        case "quote":
            return <blockquote key={key}>{renderInlines(block.inlines)}</blockquote>;
        case "list": {
            const items = block.items.map((item, index) => <li key={index}>{renderInlines(item)}</li>);
            return block.ordered ? <ol key={key}>{items}</ol> : <ul key={key}>{items}</ul>;
        }
    }
}

function renderInlines(inlines: readonly InlineNode[]): ReactNode[] {
    return inlines.map((inline, index) => {
        const text = showControlCharacters(inline.text);
        switch (inline.kind) {
            case "text":
                return text;
            case "code":
                return <code key={index}>{text}</code>;
            case "strong":
                return <strong key={index}>{text}</strong>;
            case "em":
                return <em key={index}>{text}</em>;
        }
    });
}
