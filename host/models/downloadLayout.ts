// The files one download source stands for, by node-llama-cpp's and llama.cpp's rules for split
// models: a URL naming one part of `model-00001-of-00003.gguf` stands for all three parts, kept side
// by side under their own names (llama.cpp's loader opens the first and finds the others by name);
// one naming `model.gguf.part1of3` stands for three binary parts joined into `model.gguf`.
import path from "node:path";
import { downloadFileName } from "./downloadFileName.js";
import { DownloadFailedError } from "./modelErrors.js";

/**
 * The most parts one download may have: llama.cpp's names count to 99,999, and every part is asked
 * about (HEAD) before the first byte is written.
 */
export const MAX_DOWNLOAD_PARTS = 256;

/** llama.cpp's split parts (llama_split_path: `%s-%05d-of-%05d.gguf`). */
const SPLIT_PART = /-(\d{5})-of-(\d{5})\.gguf$/;
/** Binary parts, joined byte for byte (node-llama-cpp's resolveBinarySplitGgufPartUrls). */
const BINARY_PART = /\.gguf\.part(\d+)of(\d+)$/i;

export interface DownloadPart {
    /** The http(s) URL its bytes come from. */
    readonly url: string;
    /** Its own file, directly inside the models directory; a binary part's is joined into the download's file and deleted. */
    readonly path: string;
}

export interface DownloadLayout {
    /** The file a loader opens: the one file, the first of llama.cpp's parts, or the file binary parts are joined into. */
    readonly filePath: string;
    /** In order; one for a file that is not split. */
    readonly parts: readonly DownloadPart[];
    /** Binary parts are joined into `filePath` once all have arrived; llama.cpp's parts stay as they are. */
    readonly joined: boolean;
}

/**
 * The layout of a download from `url` into `directory`, its file named `fileName` (by default
 * downloadFileName's; for a split model, a part's name). Throws download_failed for a model split
 * into more than MAX_DOWNLOAD_PARTS parts.
 */
export function downloadLayout(url: string, directory: string, fileName: string = downloadFileName(url)): DownloadLayout {
    const parsed = new URL(url);
    const split = SPLIT_PART.exec(parsed.pathname);
    const binary = BINARY_PART.exec(parsed.pathname);
    const match = split ?? binary;
    const part = Number(match?.[1] ?? 0);
    const numParts = Number(match?.[2] ?? 0);
    if (match === null || part === 0 || numParts === 0 || part > numParts || numParts === 1) {
        const filePath = path.join(directory, fileName);
        return { filePath, parts: [{ url, path: filePath }], joined: false };
    }
    if (numParts > MAX_DOWNLOAD_PARTS) {
        throw new DownloadFailedError(
            `${url.slice(0, 200)} is one part of a model split into ${numParts.toLocaleString("en-US")} files; Kvault downloads at most ${MAX_DOWNLOAD_PARTS} parts. Download a model split into fewer files.`
        );
    }
    const numbers = Array.from({ length: numParts }, (_, index) => index + 1);
    const urlOf = (replacement: string): string => {
        const partUrl = new URL(parsed.href);
        partUrl.pathname = parsed.pathname.slice(0, parsed.pathname.length - match[0].length) + replacement;
        return partUrl.href;
    };
    if (split !== null) {
        const stem = fileName.replace(SPLIT_PART, "").replace(/\.gguf$/i, "");
        const suffix = (index: number): string => `-${String(index).padStart(5, "0")}-of-${split[2]}.gguf`;
        const parts = numbers.map((index) => ({ url: urlOf(suffix(index)), path: path.join(directory, `${stem}${suffix(index)}`) }));
        return { filePath: parts[0]!.path, parts, joined: false };
    }
    const filePath = path.join(directory, fileName);
    const suffix = (index: number): string => `.part${String(index).padStart(binary![1]!.length, "0")}of${binary![2]}`;
    const extension = binary![0].slice(0, ".gguf".length); // as the server spells it
    const parts = numbers.map((index) => ({ url: urlOf(`${extension}${suffix(index)}`), path: `${filePath}${suffix(index)}` }));
    return { filePath, parts, joined: true };
}
