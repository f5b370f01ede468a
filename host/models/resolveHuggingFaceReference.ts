// An `hf:` reference as a URL and a file name, by Hugging Face's URL scheme
// ({base}/{owner}/{repo}/resolve/{branch}/{file}), without node-llama-cpp: its createModelDownloader
// creates ipull's downloader as it resolves, whose first request plans one entry per 5 MiB of the
// size the server claims (a claim of 2^51 bytes ends the process). The names are node-llama-cpp's
// (`hf_{owner}_…`), so a file downloaded by an older Kvault keeps its name.
//   hf:owner/repo/path/file.gguf#branch   that file (`#branch` optional, default main)
//   hf:owner/repo:Q4_K_M                  the repository's file of that quantization, from its
//                                         file list (HuggingFaceClient.repoFiles); Q4_K_M by default
import type { HuggingFaceClient } from "./catalogue/HuggingFaceClient.js";
import { modelFileName } from "./downloadFileName.js";
import { DownloadFailedError } from "./modelErrors.js";

/** node-llama-cpp's quantization when a reference names none. */
const DEFAULT_QUANTIZATION = "Q4_K_M";
const DEFAULT_BRANCH = "main";
/** Files named in a refusal that lists the repository's files. */
const MAX_LISTED_FILES = 8;

const SPLIT_PART = /-(\d{5})-of-(\d{5})\.gguf$/;
const BINARY_PART = /\.gguf\.part\d+of\d+$/i;
const NAME = /^[\w.-]+$/;

export interface HuggingFaceFile {
    /** Where its bytes are: Hugging Face's resolve URL, which redirects to its storage. */
    readonly url: string;
    /** What it is saved as in the models directory (a part's name for a split model). */
    readonly fileName: string;
}

/** The file `source` (an `hf:` reference) names; rejects with download_failed saying what to give instead. */
export async function resolveHuggingFaceReference(source: string, huggingFace: HuggingFaceClient): Promise<HuggingFaceFile> {
    const text = source.replace(/^hf:(\/\/)?/i, "");
    const [owner = "", repoAndTag = "", ...path] = text.split("/");
    const [repo = "", tag = "", ...more] = repoAndTag.split(":");
    if (!NAME.test(owner) || !NAME.test(repo) || more.length > 0 || (path.length > 0 && tag !== "")) {
        throw new DownloadFailedError(
            `${source.slice(0, 200)} is not a Hugging Face reference Kvault reads: give hf:owner/repo:QUANT (hf:unsloth/Qwen3-0.6B-GGUF:Q4_K_M) or hf:owner/repo/file.gguf.`
        );
    }
    if (path.length > 0) {
        const [filePath = "", branch = DEFAULT_BRANCH] = path.join("/").split("#");
        const parts = filePath.split("/");
        if (filePath === "" || parts.some((part) => part === "" || part === "." || part === "..")) {
            throw new DownloadFailedError(`${source.slice(0, 200)} names no file of ${owner}/${repo}; give hf:owner/repo/file.gguf.`);
        }
        const fileName = parts.at(-1)!.replace(BINARY_PART, ".gguf");
        const prefix = filePrefix(owner, repo, branch || DEFAULT_BRANCH, parts.slice(0, -1), fileName);
        return {
            url: huggingFace.resolveUrl(`${owner}/${repo}`, filePath, branch || DEFAULT_BRANCH),
            fileName: modelFileName(`${prefix}${fileName}`)
        };
    }
    const quantization = (tag === "" || tag.toLowerCase() === "latest" ? DEFAULT_QUANTIZATION : tag).toUpperCase();
    const listed = await huggingFace.repoFiles(`${owner}/${repo}`).catch((error: unknown) => {
        throw new DownloadFailedError(`Hugging Face could not list ${owner}/${repo}'s files: ${(error as Error).message}`);
    });
    if (listed.kind === "offline") {
        throw new DownloadFailedError(`Hugging Face could not list ${owner}/${repo}'s files (${listed.message}); try again when online.`);
    }
    const quantized = new RegExp(`(?<![A-Z0-9])${quantization.replace(/[^A-Z0-9_]/g, "")}(?![A-Z0-9_])`);
    // A split model is listed once, by its first part; a vision projector is no model to chat with.
    const models = listed.value.filter((file) => !/mmproj/i.test(file.path) && (SPLIT_PART.exec(file.path)?.[1] ?? "00001") === "00001");
    const chosen = models.find((file) => quantized.test(file.path.split("/").at(-1)!.toUpperCase()));
    if (chosen === undefined) {
        const names = models.slice(0, MAX_LISTED_FILES).map((file) => file.path);
        throw new DownloadFailedError(
            `${owner}/${repo} has no .gguf file of the quantization ${quantization}` +
                (names.length === 0 ? " (it lists no .gguf file at its top level)." : `; its files include ${names.join(", ")}.`) +
                ` Name one: hf:${owner}/${repo}/FILE.gguf.`
        );
    }
    // node-llama-cpp names it after the repository and the quantization, not the file on the server.
    const baseName = repo.replace(/-gguf$/i, "");
    const split = SPLIT_PART.exec(chosen.path);
    const fileName = `${baseName}.${quantization}${split === null ? "" : `-${split[1]}-of-${split[2]}`}.gguf`;
    return {
        url: huggingFace.resolveUrl(`${owner}/${repo}`, chosen.path),
        fileName: modelFileName(`${filePrefix(owner, repo, DEFAULT_BRANCH, [], `${baseName}.gguf`)}${fileName}`)
    };
}

/** node-llama-cpp's buildHuggingFaceFilePrefix: `hf_{owner}_`, then the repo, branch and folders where the file name does not say them. */
function filePrefix(owner: string, repo: string, branch: string, folders: readonly string[], fileName: string): string {
    const words = ["hf", owner];
    const stem = (name: string): string =>
        name
            .replace(SPLIT_PART, ".gguf")
            .replace(/\.gguf$/i, "")
            .toLowerCase();
    const repoStem = repo.replace(/-gguf$/i, "").toLowerCase();
    if (!(/-gguf$/i.test(repo) && stem(fileName).startsWith(repoStem)) || branch !== DEFAULT_BRANCH) {
        words.push(repo);
    }
    if (branch !== DEFAULT_BRANCH) {
        words.push(branch);
    }
    const dirs = folders.length > 0 && folders.at(-1)!.toLowerCase() === stem(fileName) ? folders.slice(0, -1) : folders;
    if (dirs.length > 0) {
        words.push(dirs.join("__"));
    }
    return `${words.join("_")}_`;
}
