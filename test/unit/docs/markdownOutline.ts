// What a Markdown page offers a link: its headings and the anchors GitHub gives them.

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
    return heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, "")
        .replace(/ /g, "-");
}

/** The page's text outside fenced code blocks, where `#` starts a heading. */
export function proseOf(markdown: string): string {
    return markdown.replace(/```[\s\S]*?```/g, "");
}

export interface MarkdownOutline {
    readonly headings: ReadonlySet<string>;
    readonly anchors: ReadonlySet<string>;
}

export function outlineOf(markdown: string): MarkdownOutline {
    const text = proseOf(markdown);
    const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => match[1]!.trim());
    const explicit = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((match) => match[1]!);
    return { headings: new Set(headings), anchors: new Set([...headings.map(headingSlug), ...explicit]) };
}
