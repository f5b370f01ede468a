// Where a download's bytes come from and the files they go to. A URL is its own address, and Kvault
// names its file (downloadFileName); an `hf:` reference is resolved to a URL by Hugging Face's URL
// scheme (resolveHuggingFaceReference). Either may name a part of a split model, which stands for
// all of its parts (downloadLayout). No request here believes a size: those are fetchModelFile's.
import type { HuggingFaceClient } from "./catalogue/HuggingFaceClient.js";
import { isDirectlyInside } from "./downloadFileName.js";
import { downloadLayout, type DownloadLayout } from "./downloadLayout.js";
import { DownloadFailedError } from "./modelErrors.js";
import { resolveHuggingFaceReference } from "./resolveHuggingFaceReference.js";
import { isHttpUrl } from "./validateDownloadSource.js";

/**
 * The files of `source` in `modelsDirectory`; rejects with download_failed for an `hf:` reference
 * that names no file, or a model split into more parts than Kvault downloads.
 */
export async function resolveDownloadSource(
    source: string,
    modelsDirectory: string,
    huggingFace: HuggingFaceClient
): Promise<DownloadLayout> {
    if (isHttpUrl(source)) {
        return downloadLayout(source, modelsDirectory);
    }
    const file = await resolveHuggingFaceReference(source, huggingFace);
    const layout = downloadLayout(file.url, modelsDirectory, file.fileName);
    if (![layout.filePath, ...layout.parts.map((part) => part.path)].every((filePath) => isDirectlyInside(modelsDirectory, filePath))) {
        throw new DownloadFailedError(
            `${source.slice(0, 200)} resolves to the file name ${JSON.stringify(file.fileName)}, which is not a file name in ${modelsDirectory}; download it by its URL instead.`
        );
    }
    return layout;
}
