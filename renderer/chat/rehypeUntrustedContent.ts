import type { Element, ElementContent, Root, RootContent } from "hast";
import { linkAddress } from "./linkAddress.js";

/**
 * Model output made inert before react-markdown renders it (its urlTransform and element list
 * check again after this):
 *
 * - raw HTML is text: a top-level HTML block becomes a paragraph of its characters (line breaks
 *   kept, see .md-raw-html), HTML within a line a text node; there is no rehype-raw, so nothing
 *   in an answer is ever parsed as HTML;
 * - an image becomes a link to its address, labelled with its alt text (never an <img>: a remote
 *   image would be fetched as the answer renders, telling a server that and when it was read);
 * - a link whose address may not be one (see linkAddress) keeps that address in
 *   `data-refused-href`, so MarkdownLink can say which address it did not follow; the
 *   urlTransform then removes its href.
 *
 * Footnote references and back-references (in-page #fragments) are left alone: MarkdownLink
 * shows them as text.
 */
export function rehypeUntrustedContent(): (tree: Root) => undefined {
    return (tree) => {
        tree.children = tree.children.map((child) =>
            child.type === "raw"
                ? {
                      type: "element",
                      tagName: "p",
                      properties: { className: ["md-raw-html"] },
                      children: [{ type: "text", value: child.value }]
                  }
                : rewrite(child)
        );
    };
}

function rewrite<T extends RootContent | ElementContent>(node: T): T {
    if (node.type === "raw") {
        return { type: "text", value: node.value, position: node.position } as T;
    }
    if (node.type !== "element") {
        return node;
    }
    const element: Element = node.tagName === "img" ? imageAsLink(node) : node;
    if (element.tagName === "a" && !isFootnoteLink(element)) {
        const href = element.properties.href;
        if (typeof href !== "string" || linkAddress(href) === undefined) {
            element.properties.dataRefusedHref = typeof href === "string" ? href : "";
        }
    }
    element.children = element.children.map(rewrite);
    return element as T;
}

function imageAsLink(image: Element): Element {
    const { src, alt, title } = image.properties;
    const label = typeof alt === "string" && alt.trim() !== "" ? `Image: ${alt}` : "Image";
    const children: ElementContent[] = [{ type: "text", value: label }];
    return {
        type: "element",
        tagName: "a",
        properties: { href: typeof src === "string" ? src : "", title, className: ["md-image-link"] },
        children,
        position: image.position
    };
}

function isFootnoteLink(element: Element): boolean {
    return element.properties.dataFootnoteRef !== undefined || element.properties.dataFootnoteBackref !== undefined;
}
