import { DownloadFailedError } from "./modelErrors.js";
import type { RemoteFileFacts } from "./partialDownloads.js";

/**
 * Asks the server about `url` without downloading it: HEAD, or for a server that refuses HEAD a
 * GET of its first byte. A byte stream carries no ETag, so these facts are how a
 * resume tells the same file from a changed one. Rejects with download_failed on an HTTP error.
 */
export async function probeRemoteFile(url: string, timeoutMs: number): Promise<RemoteFileFacts> {
    const signal = AbortSignal.timeout(timeoutMs);
    let response = await fetch(url, { method: "HEAD", redirect: "follow", signal, headers: { "accept-encoding": "identity" } });
    let ranged = false;
    if (response.status === 405 || response.status === 501) {
        response = await fetch(url, {
            method: "GET",
            redirect: "follow",
            signal,
            headers: { "accept-encoding": "identity", range: "bytes=0-0" }
        });
        await response.body?.cancel().catch(() => undefined);
        ranged = response.status === 206;
    }
    if (!response.ok) {
        throw new DownloadFailedError(
            `${url.slice(0, 200)} answered ${response.status} ${response.statusText}; check the address, or try again later.`
        );
    }
    const headers = response.headers;
    const contentRange = /\/(\d+)$/.exec(headers.get("content-range") ?? "");
    const totalBytes = ranged ? Number(contentRange?.[1] ?? 0) : Number(headers.get("content-length") ?? 0);
    return {
        url: response.url || url,
        totalBytes: Number.isSafeInteger(totalBytes) && totalBytes > 0 ? totalBytes : 0,
        etag: headers.get("etag") ?? undefined,
        lastModified: headers.get("last-modified") ?? undefined,
        acceptsRanges: ranged || headers.get("accept-ranges")?.toLowerCase() === "bytes"
    };
}

/**
 * How the file changed between two probes, in words ("its ETag changed from "a" to "b""), or
 * undefined when nothing the server says differs. Size first, then ETag, then Last-Modified.
 */
export function describeRemoteChange(before: RemoteFileFacts, after: RemoteFileFacts): string | undefined {
    if (before.totalBytes !== after.totalBytes) {
        return `its size changed from ${before.totalBytes.toLocaleString("en-US")} to ${after.totalBytes.toLocaleString("en-US")} bytes`;
    }
    if (before.etag !== after.etag) {
        return `its ETag changed from ${before.etag ?? "none"} to ${after.etag ?? "none"}`;
    }
    if (before.lastModified !== after.lastModified) {
        return `its Last-Modified changed from ${before.lastModified ?? "none"} to ${after.lastModified ?? "none"}`;
    }
    return undefined;
}

/** Why a partial download of this file cannot be continued safely, or undefined when it can. */
export function whyNotResumable(remote: RemoteFileFacts | undefined): string | undefined {
    if (remote === undefined) {
        return "Kvault could not ask the server about the file when the download started, so it cannot tell whether it changed since";
    }
    if (!remote.acceptsRanges) {
        return "the server does not accept range requests (no Accept-Ranges: bytes), so it cannot send the rest of a file";
    }
    if (remote.totalBytes === 0) {
        return "the server does not say how big the file is";
    }
    if (remote.etag === undefined && remote.lastModified === undefined) {
        return "the server gives no ETag or Last-Modified, so Kvault cannot tell whether the file changed since";
    }
    return undefined;
}
