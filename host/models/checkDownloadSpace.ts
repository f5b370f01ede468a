import fs from "node:fs";
import { KvaultError } from "../../engine/index.js";

/**
 * A download that does not fit the disk: refused before its first byte when the server's size
 * says so, or stopped as the bytes arrive when the disk fills (a server that sends more than it
 * said, or no size at all). The message names the bytes needed and free.
 */
export class DownloadNoSpaceError extends KvaultError {
    readonly code = "download_no_space";
}

/**
 * Bytes a download leaves free on its disk for everything else Kvault writes there (chats are
 * fsynced journals, and a full disk would fail them): 256 MiB.
 */
export const DEFAULT_KEEP_FREE_BYTES = 256 * 1024 * 1024;

/** Bytes free to this process on the file system holding `directory` (statfs: available blocks × block size). */
export function freeDiskBytes(directory: string): number {
    const stats = fs.statfsSync(directory);
    return stats.bavail * stats.bsize;
}

export interface DownloadSpaceCheck {
    /** The models directory. */
    readonly directory: string;
    /** What the file is called, for the message. */
    readonly name: string;
    /** Bytes still to arrive; undefined when the server did not say how big the file is. */
    readonly remainingBytes: number | undefined;
    /** Bytes that arrived so far. */
    readonly receivedBytes: number;
    readonly freeBytes: number;
    readonly keepFreeBytes: number;
}

/**
 * Why the download cannot go on (a DownloadNoSpaceError), or undefined while it fits: the bytes
 * still to come, plus what Kvault keeps free, must be free now. Without a size, the download goes
 * on until the disk is down to what Kvault keeps free.
 */
export function checkDownloadSpace(check: DownloadSpaceCheck): DownloadNoSpaceError | undefined {
    const needed = (check.remainingBytes ?? 0) + check.keepFreeBytes;
    if (check.freeBytes >= needed) {
        return undefined;
    }
    const disk = `the disk holding ${check.directory} has ${bytes(check.freeBytes)} free, of which Kvault keeps ${bytes(check.keepFreeBytes)} for chats and settings`;
    // Past the first byte the caller says what is kept and how to go on (Resume, or download again).
    const todo = check.receivedBytes === 0 ? "Free some space on that disk, then download again." : "Free some space on that disk.";
    if (check.remainingBytes === undefined) {
        return new DownloadNoSpaceError(
            `The download of ${check.name} was stopped after ${bytes(check.receivedBytes)}: the server did not say how big the file is, and ${disk}. ${todo}`
        );
    }
    if (check.receivedBytes === 0) {
        return new DownloadNoSpaceError(`${check.name} does not fit: it needs ${bytes(check.remainingBytes)}, and ${disk}. ${todo}`);
    }
    return new DownloadNoSpaceError(
        `The download of ${check.name} was stopped after ${bytes(check.receivedBytes)}: it needs ${bytes(check.remainingBytes)} more, and ${disk}. ${todo}`
    );
}

function bytes(count: number): string {
    return `${count.toLocaleString("en-US")} ${count === 1 ? "byte" : "bytes"}`;
}
