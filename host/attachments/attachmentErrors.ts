import { KvaultError } from "../../engine/index.js";

/** A file Kvault cannot read text from (an image, an archive, a binary): nothing was attached. */
export class AttachmentTypeError extends KvaultError {
    readonly code = "attachment_unsupported";
}

/** A PDF or DOCX that is damaged, or a text file that is not UTF-8: nothing was attached. */
export class AttachmentUnreadableError extends KvaultError {
    readonly code = "attachment_unreadable";
}

/** A PDF that needs a password: Kvault never asks for one; save a copy without it. */
export class AttachmentEncryptedError extends KvaultError {
    readonly code = "attachment_encrypted";
}

/** A file, or its text, over attachmentLimits: refused whole, never cut. */
export class AttachmentTooLargeError extends KvaultError {
    readonly code = "attachment_too_large";
}
