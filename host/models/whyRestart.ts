// What a resume is checked against: whether the bytes on disk can be continued against what the
// server says now.
import type { RemoteFileFacts } from "./partialDownloads.js";
import { describeRemoteChange, whyNotResumable } from "./probeRemoteFile.js";

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
