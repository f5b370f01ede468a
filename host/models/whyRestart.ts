// What a resume is checked against: whether the bytes on disk can be continued against what the
// server says now.
import type { PartialPart, RemoteFileFacts } from "./partialDownloads.js";
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

/** whyNotResumable of a download's parts: the first part's reason, or undefined when every part can be continued. */
export function whyPartsNotResumable(parts: readonly PartialPart[]): string | undefined {
    return parts.length === 0
        ? whyNotResumable(undefined)
        : parts.map((part) => whyNotResumable(part.remote)).find((why) => why !== undefined);
}

/**
 * whyRestart over a download's parts: the files on disk (`before`) against what the server says
 * now of the parts the source stands for now (`now`, the same paths in the same order, or the
 * model's parts changed).
 */
export function whyPartsRestart(before: readonly PartialPart[], now: readonly PartialPart[]): string | undefined {
    if (before.length !== now.length || before.some((part, index) => part.path !== now[index]!.path)) {
        return `the model's parts changed since the partial download (${before.length} then, ${now.length} now)`;
    }
    return before.map((part, index) => whyRestart(part.remote, now[index]!.remote)).find((why) => why !== undefined);
}
