// Files attached to a message: their text, taken out of the file by the host (host/attachments/),
// goes into the user's message as one block per file, so the meter, the turn, the stored chat and
// its export all hold exactly the same text, and the tokens the meter counts are the ones sent.
import { turnLimits } from "./limits.js";

/** How a file's text was read: as UTF-8 text (plain, Markdown, source code), from a PDF's text layer, or a DOCX's paragraphs. */
export type AttachmentKind = "text" | "pdf" | "docx";

/** What extractAttachment answers (and the API reads from a `file` content part). */
export interface ExtractedAttachment {
    readonly name: string;
    readonly kind: AttachmentKind;
    readonly text: string;
    readonly numBytes: number;
}

const MiB = 1024 * 1024;

export const attachmentLimits = Object.freeze({
    /** A file's bytes: base64 adds a third, and the call must fit one RPC message (rpcLimits.maxMessageBytes). */
    maxFileBytes: 16 * MiB,
    /** A file's text, in characters: half a message, so the typed question always has room beside one file. */
    maxTextChars: turnLimits.maxMessageChars / 2,
    maxNameChars: 255
});

/** The block a file's text is sent as: its name, then its text whole. */
export function attachmentBlock(name: string, text: string): string {
    return `<file name="${name.replaceAll('"', "'")}">\n${text}\n</file>`;
}

/** The user's message: every file's block, then what they typed. */
export function composeMessage(blocks: readonly string[], typed: string): string {
    return [...blocks, typed].filter((part) => part !== "").join("\n\n");
}
