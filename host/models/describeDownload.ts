// The words download messages are made of: a download's name and server, byte counts, seconds,
// and an error as the record carries it.
import type { KvaultError } from "../../engine/index.js";
import type { DownloadEntry } from "./DownloadEntry.js";

/** The file's name once known, else the source (at most 200 characters). */
export function describeName(entry: DownloadEntry): string {
    return entry.path === "" ? entry.source.slice(0, 200) : entry.path.split(/[\\/]/).pop()!;
}

/** The host the bytes come from, or "the server" when the source is no URL. */
export function describeHost(entry: DownloadEntry): string {
    try {
        return new URL(entry.parts[0]?.remote?.url ?? entry.source).host;
    } catch {
        return "the server";
    }
}

/** "1,234 bytes". */
export function bytes(count: number): string {
    return `${count.toLocaleString("en-US")} ${count === 1 ? "byte" : "bytes"}`;
}

/** "1.5 s" from milliseconds. */
export function seconds(ms: number): string {
    return `${(ms / 1000).toLocaleString("en-US", { maximumFractionDigits: 1 })} s`;
}

/** An error as a download record carries it (contract/models.ts ModelDownload.error). */
export function payload(error: KvaultError): { code: string; message: string } {
    return { code: error.code, message: error.message };
}
