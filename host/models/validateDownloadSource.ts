import { fieldLimits } from "../../contract/limits.js";
import { DownloadSourceInvalidError } from "./modelErrors.js";

/** Refuses anything but an http(s) URL whose path decodes (no malformed %-escape) or an `hf:` reference, of at most 4,096 characters. */
export function validateDownloadSource(source: unknown): string {
    if (typeof source !== "string" || source.trim() === "") {
        throw new DownloadSourceInvalidError("Give a model URL (http:// or https://) or a Hugging Face reference (hf:owner/repo:quant).");
    }
    const text = source.trim();
    if (text.length > fieldLimits.maxDownloadSourceChars) {
        throw new DownloadSourceInvalidError(
            `The download source has ${text.length.toLocaleString("en-US")} characters; the limit is ${fieldLimits.maxDownloadSourceChars.toLocaleString("en-US")}.`
        );
    }
    if (/^hf:[^\s]+$/i.test(text)) {
        return text;
    }
    let url: URL;
    try {
        url = new URL(text);
    } catch {
        throw new DownloadSourceInvalidError(`${JSON.stringify(text.slice(0, 60))} is not a URL; give an http(s) URL or an hf: reference.`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw new DownloadSourceInvalidError(`Downloads use http://, https:// or hf:, not ${url.protocol}//.`);
    }
    try {
        decodeURIComponent(url.pathname);
    } catch {
        throw new DownloadSourceInvalidError(
            `The path of ${JSON.stringify(text.slice(0, 200))} has a malformed %-escape (each % must begin a UTF-8 byte in hex, %2F); check the URL.`
        );
    }
    return url.href;
}

/** Whether a (validated) source is a URL rather than an `hf:` reference. */
export function isHttpUrl(source: string): boolean {
    return /^https?:\/\//i.test(source);
}
