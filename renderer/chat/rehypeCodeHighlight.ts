// Fenced code highlighted by highlight.js (through lowlight and rehype-highlight), in the
// languages below only: a fence in another language, or in none, stays plain text. The
// languages are the ones answers use most; each is a grammar in the bundle and a definition
// built at start, so the list is kept short on purpose.
import type { Root } from "hast";
import type { LanguageFn } from "highlight.js";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import markdown from "highlight.js/lib/languages/markdown";
import php from "highlight.js/lib/languages/php";
import plaintext from "highlight.js/lib/languages/plaintext";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import swift from "highlight.js/lib/languages/swift";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import rehypeHighlight from "rehype-highlight";

/** The languages a fence may name (each also by its usual aliases: js, ts, py, sh, html, yml, …). */
export const highlightLanguages: Readonly<Record<string, LanguageFn>> = {
    bash,
    c,
    cpp,
    csharp,
    css,
    diff,
    go,
    java,
    javascript,
    json,
    kotlin,
    markdown,
    php,
    plaintext,
    python,
    ruby,
    rust,
    shell,
    sql,
    swift,
    typescript,
    xml,
    yaml
};

// One highlighter for the page. rehype-highlight builds a new one (every grammar compiled again)
// each time its plugin is attached, and react-markdown attaches plugins on every render: a
// streaming code block would pay that for each token. Attached once here, its transform is shared.
const highlight = rehypeHighlight({ languages: highlightLanguages, detect: false });

/** The rehype plugin MarkdownBlock uses: highlights `<pre><code class="language-…">` in place. */
export function rehypeCodeHighlight(): (tree: Root, file: Parameters<typeof highlight>[1]) => undefined {
    return highlight;
}
