import mammoth from "mammoth";
import { extractText, getDocumentProxy } from "unpdf";
import { attachmentLimits, type AttachmentKind, type ExtractedAttachment } from "../../contract/attachments.js";
import { AttachmentEncryptedError, AttachmentTooLargeError, AttachmentTypeError, AttachmentUnreadableError } from "./attachmentErrors.js";

/** Bytes a file begins with: a PDF's header, and a ZIP's local file header (a DOCX is a ZIP). */
const PDF_MAGIC = "%PDF-";
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];

/**
 * The text of an attached file, read in this (the host's) process: a PDF's text layer through
 * unpdf, a DOCX's paragraphs through mammoth, anything else as UTF-8 text when it is that (no NUL
 * byte, valid UTF-8). Bounded before it is believed: a file or a text over attachmentLimits is
 * refused with its size, never cut. Every failure is one of the typed attachment errors.
 */
export async function extractFileText(name: string, bytes: Uint8Array): Promise<ExtractedAttachment> {
    if (bytes.length > attachmentLimits.maxFileBytes) {
        throw new AttachmentTooLargeError(
            `${name} has ${bytes.length.toLocaleString("en-US")} bytes; Kvault attaches files of at most ${attachmentLimits.maxFileBytes.toLocaleString("en-US")}. Nothing of it was attached.`
        );
    }
    const kind = kindOf(name, bytes);
    const text = kind === "pdf" ? await pdfText(name, bytes) : kind === "docx" ? await docxText(name, bytes) : utf8Text(name, bytes);
    if (text.length > attachmentLimits.maxTextChars) {
        throw new AttachmentTooLargeError(
            `${name} holds ${text.length.toLocaleString("en-US")} characters of text; a message takes files of at most ${attachmentLimits.maxTextChars.toLocaleString("en-US")}. Nothing of it was attached.`
        );
    }
    return { name, kind, text, numBytes: bytes.length };
}

function kindOf(name: string, bytes: Uint8Array): AttachmentKind {
    if (new TextDecoder("latin1").decode(bytes.subarray(0, PDF_MAGIC.length)) === PDF_MAGIC) {
        return "pdf";
    }
    if (ZIP_MAGIC.every((byte, index) => bytes[index] === byte)) {
        if (/\.docx$/i.test(name)) {
            return "docx";
        }
        throw new AttachmentTypeError(
            `${name} is a ZIP archive, not a DOCX; Kvault reads text, Markdown, source code, PDF and DOCX files.`
        );
    }
    return "text";
}

async function pdfText(name: string, bytes: Uint8Array): Promise<string> {
    try {
        return (await extractText(await getDocumentProxy(new Uint8Array(bytes)), { mergePages: true })).text;
    } catch (error) {
        if ((error as Error).name === "PasswordException") {
            throw new AttachmentEncryptedError(`${name} is a PDF locked with a password; save a copy without one and attach that.`);
        }
        throw new AttachmentUnreadableError(`${name} is not a PDF Kvault can read (${(error as Error).message}); nothing was attached.`);
    }
}

async function docxText(name: string, bytes: Uint8Array): Promise<string> {
    try {
        return (await mammoth.extractRawText({ buffer: Buffer.from(bytes) })).value;
    } catch (error) {
        throw new AttachmentUnreadableError(`${name} is not a DOCX Kvault can read (${(error as Error).message}); nothing was attached.`);
    }
}

function utf8Text(name: string, bytes: Uint8Array): string {
    if (bytes.includes(0)) {
        throw new AttachmentTypeError(
            `${name} is a binary file (it holds NUL bytes); Kvault reads text, Markdown, source code, PDF and DOCX files.`
        );
    }
    try {
        return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
        throw new AttachmentUnreadableError(`${name} is not UTF-8 text; save it as UTF-8 and attach it again.`);
    }
}
