import crypto from "node:crypto";
import path from "node:path";

/** Longest file name a download gets, in characters (node-llama-cpp's downloader cuts at 100 too). */
const MAX_NAME_CHARS = 100;
/** llama.cpp's split parts: `model-00001-of-00003.gguf`, and the binary parts `model.gguf.part1of3`. */
const BINARY_PART = /\.gguf\.part\d+of\d+$/i;
/** The name of one of llama.cpp's parts ends so; a cut name keeps it, as the loader finds the other parts by it. */
const SPLIT_SUFFIX = /-\d{5}-of-\d{5}\.gguf$/;

/**
 * The file name a download from `url` (http or https) is saved under, in the models directory: the
 * last non-empty segment of its path, %-decoded, with anything but letters, digits, `.`, `-`, `_`
 * and `+` replaced by `_`, no leading dot, and `.gguf` at the end. Never empty, never a path, never
 * `.` or `..`: a URL ending in `/` (or with no path at all) is named after its host and a hash of
 * the URL. A binary split part names the file its parts are joined into; a part of llama.cpp's
 * split keeps its `-00001-of-00003.gguf` when the name is cut.
 */
export function downloadFileName(url: string): string {
    const parsed = new URL(url);
    const segments = parsed.pathname.split("/").filter((segment) => segment !== "");
    const last = segments.at(-1);
    const name = last === undefined ? "" : sanitize(decodeSegment(last));
    if (name.replace(/[._]/g, "") === "") {
        const hash = crypto.createHash("sha256").update(parsed.href).digest("hex").slice(0, 12);
        return modelFileName(`${sanitize(parsed.hostname) || "download"}-${hash}`);
    }
    return modelFileName(name);
}

/**
 * `text` as a file name in the models directory, by downloadFileName's rules (no name made of
 * dots and underscores only: the caller gives another).
 */
export function modelFileName(text: string): string {
    let name = sanitize(text).replace(BINARY_PART, ".gguf");
    if (!name.toLowerCase().endsWith(".gguf")) {
        name = `${name}.gguf`;
    }
    if (name.length > MAX_NAME_CHARS) {
        const suffix = SPLIT_SUFFIX.exec(name)?.[0] ?? ".gguf";
        name = `${name.slice(0, MAX_NAME_CHARS - suffix.length)}${suffix}`;
    }
    return name;
}

/** Whether `filePath` is a file directly inside `directory` (never the directory itself, never beneath or outside it). */
export function isDirectlyInside(directory: string, filePath: string): boolean {
    const resolved = path.resolve(filePath);
    const name = path.basename(resolved);
    return path.dirname(resolved) === path.resolve(directory) && name !== "" && name !== "." && name !== "..";
}

function decodeSegment(segment: string): string {
    try {
        return decodeURIComponent(segment);
    } catch {
        return segment; // validateDownloadSource refuses such URLs; this keeps the function total
    }
}

function sanitize(text: string): string {
    return text
        .normalize("NFC")
        .replace(/[^\p{L}\p{N}._+-]+/gu, "_")
        .replace(/^[._]+/, "")
        .replace(/_+/g, "_");
}
