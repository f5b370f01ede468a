/**
 * Control characters (a small model emits them) as their visible Unicode pictures, so an answer
 * never hides text from the reader; tabs and newlines stay, and so does a carriage return, which
 * Markdown reads as a line end. The stored message and its Copy keep the original text.
 */
export function showControlCharacters(text: string): string {
    // eslint-disable-next-line no-control-regex
    return text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, (char) =>
        char === "\u007F" ? "\u2421" : String.fromCharCode(0x2400 + char.charCodeAt(0))
    );
}
