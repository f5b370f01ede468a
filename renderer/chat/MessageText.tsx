import { useMemo, useState } from "react";
import { MarkdownBlock } from "./MarkdownBlock.js";
import { MarkdownBlockSplitter } from "./MarkdownBlockSplitter.js";
import "./MessageText.css";

/**
 * A message's text as Markdown (GitHub's flavour), rendered safely: model output is untrusted,
 * so no HTML in it is interpreted, no remote image is fetched, and links open only after the
 * user has seen their address (MarkdownBlock, MarkdownLink). Rendered block by block: while an
 * answer streams in, only its last block renders again.
 */
export function MessageText({ text }: { readonly text: string }) {
    const [splitter] = useState(() => new MarkdownBlockSplitter());
    const blocks = useMemo(() => splitter.split(text), [splitter, text]);
    return (
        <div className="message-text">
            {blocks.map((block, index) => (
                <MarkdownBlock key={index} source={block} />
            ))}
        </div>
    );
}
