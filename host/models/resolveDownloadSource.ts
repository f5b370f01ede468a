// Where a download's bytes come from and the file they go to. A URL is its own address, and Kvault
// names its file (downloadFileName). An `hf:` reference is resolved by node-llama-cpp's
// createModelDownloader, whose own first request (ipull's) still believes the size Hugging Face
// gives; its downloader is closed unused, and fetchModelFile fetches the bytes.
import path from "node:path";
import { createModelDownloader } from "node-llama-cpp";
import { downloadFileName, isDirectlyInside } from "./downloadFileName.js";
import { DownloadFailedError } from "./modelErrors.js";
import { isHttpUrl } from "./validateDownloadSource.js";

/** llama.cpp's split parts, `model-00001-of-00003.gguf`, and the binary parts `model.gguf.part1of3`. */
const SPLIT_PART = /(-\d{5}-of-\d{5}\.gguf|\.gguf\.part\d+of\d+)$/i;

export interface DownloadTarget {
    /** The http(s) URL the bytes come from. */
    readonly url: string;
    /** The final file, directly inside the models directory. */
    readonly filePath: string;
}

/** The URL and file of `source`; rejects with download_failed for an `hf:` reference that resolves to no single file inside `modelsDirectory`. */
export async function resolveDownloadSource(source: string, modelsDirectory: string): Promise<DownloadTarget> {
    if (isHttpUrl(source)) {
        if (SPLIT_PART.test(new URL(source).pathname)) {
            throw new DownloadFailedError(
                `${source.slice(0, 200)} is one part of a model split into several files, which Kvault does not download; download a model that is one file.`
            );
        }
        return { url: source, filePath: path.join(modelsDirectory, downloadFileName(source)) };
    }
    const downloader = await createModelDownloader({
        modelUri: source,
        dirPath: modelsDirectory,
        showCliProgress: false,
        skipExisting: false,
        deleteTempFileOnCancel: false
    });
    await downloader.cancel({ deleteTempFile: false }).catch(() => undefined);
    // node-llama-cpp's resolved URL is internal in 3.21.1 (ModelDownloader._modelUrl), so checked here.
    const url = (downloader as unknown as { _modelUrl?: unknown })._modelUrl;
    const filePath = downloader.entrypointFilePath;
    if (typeof url !== "string" || !/^https?:\/\//i.test(url)) {
        throw new DownloadFailedError(
            `${source.slice(0, 200)} did not resolve to an http(s) address; download the file by its URL instead.`
        );
    }
    if (downloader.filesInfo.length !== 1) {
        throw new DownloadFailedError(
            `${source.slice(0, 200)} is a model split into ${downloader.filesInfo.length} files, which Kvault does not download; download a model that is one file.`
        );
    }
    if (!isDirectlyInside(modelsDirectory, filePath)) {
        throw new DownloadFailedError(
            `${source.slice(0, 200)} resolves to the file name ${JSON.stringify(downloader.entrypointFilename ?? "")}, which is not a file name in ${modelsDirectory}; download it by its URL instead.`
        );
    }
    return { url, filePath };
}
