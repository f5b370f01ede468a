import type { Element, ElementContent } from "hast";
import type { ComponentProps } from "react";
import type { ExtraProps } from "react-markdown";
import { CopyButton } from "./CopyButton.js";

/** A fenced or indented code block: its language, a Copy for its text, and the (highlighted) code. */
export function CodeBlock({ node, children }: ComponentProps<"pre"> & ExtraProps) {
    const code = node?.children.find((child): child is Element => child.type === "element" && child.tagName === "code");
    const language = code === undefined ? undefined : codeLanguage(code);
    // mdast-util-to-hast ends a code block's text with a newline of its own.
    const text = code === undefined ? "" : textOf(code).replace(/\n$/, "");
    return (
        <div className="md-code-block" data-language={language}>
            <div className="md-code-header">
                <span className="md-code-language">{language ?? "code"}</span>
                <CopyButton text={text} label={language === undefined ? "Copy the code" : `Copy the ${language} code`} />
            </div>
            <pre className="md-code">{children}</pre>
        </div>
    );
}

/** The fence's language, from the `language-…` class remark gives the code element. */
export function codeLanguage(code: Element): string | undefined {
    const classes = code.properties.className;
    if (!Array.isArray(classes)) {
        return undefined;
    }
    for (const name of classes) {
        if (typeof name === "string" && name.startsWith("language-")) {
            return name.slice("language-".length);
        }
    }
    return undefined;
}

function textOf(node: Element | ElementContent): string {
    if (node.type === "text") {
        return node.value;
    }
    return node.type === "element" ? node.children.map(textOf).join("") : "";
}
