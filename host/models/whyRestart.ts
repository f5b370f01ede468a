// What a resume is checked against: whether the bytes on disk can be continued against what the
// server says now, and the URL to ask it at.
import type { ModelDownloader } from "node-llama-cpp";
import type { RemoteFileFacts } from "./partialDownloads.js";
import { describeRemoteChange, whyNotResumable } from "./probeRemoteFile.js";
import { isHttpUrl } from "./validateDownloadSource.js";

/**
 * Why a partial file cannot be continued against what the server says now (a sentence fragment),
 * or undefined when it can. `before` is what the server said when its bytes started arriving.
 */
export function whyRestart(before: RemoteFileFacts | undefined, now: RemoteFileFacts | undefined): string | undefined {
    const unsafe = whyNotResumable(before);
    if (unsafe !== undefined) {
        return unsafe;
    }
    if (now === undefined) {
        return "the server could not be asked whether the file changed since the partial download";
    }
    if (!now.acceptsRanges) {
        return "the server no longer accepts range requests";
    }
    const change = describeRemoteChange(before!, now);
    return change === undefined ? undefined : `the file on the server changed since the partial download (${change})`;
}

/**
 * The http(s) URL the source resolves to: the source itself, or for an `hf:` reference the URL
 * node-llama-cpp resolved (its ModelDownloader's `_modelUrl`, internal in 3.21.1 and so checked
 * here). Undefined when not known: such a download is not resumable.
 */
export function resolvedUrl(downloader: ModelDownloader, source: string): string | undefined {
    if (isHttpUrl(source)) {
        return source;
    }
    const internal = (downloader as unknown as { _modelUrl?: unknown })._modelUrl;
    return typeof internal === "string" && /^https?:\/\//i.test(internal) ? internal : undefined;
}
