/**
 * `text` in chunks of at most `maxChars` characters, each ending at the last whitespace before the
 * limit where there is one (so words stay whole), trimmed, empty ones left out. Joined, the chunks
 * hold every word of the text in order.
 */
export function chunkText(text: string, maxChars: number): string[] {
    const chunks: string[] = [];
    let start = 0;
    while (start < text.length) {
        let end = Math.min(text.length, start + maxChars);
        const slice = text.slice(start, end);
        const cut = Math.max(slice.lastIndexOf(" "), slice.lastIndexOf("\n"));
        if (end < text.length && cut > 0) {
            end = start + cut;
        }
        const chunk = text.slice(start, end).trim();
        if (chunk !== "") {
            chunks.push(chunk);
        }
        start = end;
    }
    return chunks;
}
