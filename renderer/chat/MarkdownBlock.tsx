import { memo } from "react";
import Markdown, { type Options } from "react-markdown";
import { showControlCharacters } from "./controlCharacters.js";
import { markdownUrlTransform } from "./linkAddress.js";
import { markdownComponents } from "./markdownComponents.js";
import { remarkPlugins } from "./markdownSyntax.js";
import { rehypeCodeHighlight } from "./rehypeCodeHighlight.js";
import { rehypeUntrustedContent } from "./rehypeUntrustedContent.js";

const rehypePlugins: NonNullable<Options["rehypePlugins"]> = [rehypeUntrustedContent, rehypeCodeHighlight];

/**
 * Every element Markdown may produce here; anything else is dropped and its text kept. HTML in
 * an answer never gets here as elements: rehypeUntrustedContent turns it into text (and there is
 * no rehype-raw), so a <script> or an <img src=…> in an answer is only characters.
 */
const allowedElements = [
    ..."p h1 h2 h3 h4 h5 h6 blockquote ul ol li pre code em strong del a hr br".split(" "),
    ..."table thead tbody tr th td input span sup section".split(" ")
];

/** One top-level block of a message's Markdown (see MarkdownBlockSplitter); memoized on its text. */
export const MarkdownBlock = memo(function MarkdownBlock({ source }: { readonly source: string }) {
    return (
        <Markdown
            remarkPlugins={remarkPlugins}
            rehypePlugins={rehypePlugins}
            components={markdownComponents}
            urlTransform={markdownUrlTransform}
            allowedElements={allowedElements}
            unwrapDisallowed
        >
            {showControlCharacters(source)}
        </Markdown>
    );
});
