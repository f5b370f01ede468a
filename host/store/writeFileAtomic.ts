import crypto from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

/** The random part of a temporary file's name, in bytes (twice as many hex digits). */
const TEMPORARY_RANDOM_BYTES = 6;

/**
 * Replaces `filePath` with `text` so that a reader, or the next start after a crash or power
 * loss, sees the old file or the new one, never half of either: the text goes to a temporary
 * file beside it, is flushed to disk, is renamed over the target (atomic on one file system),
 * and the directory is flushed so that the rename itself survives a power loss.
 * On failure the temporary file is removed and the target is untouched. `mode` applies to a new
 * file: the settings hold the API key and the chats are private, so by default only the user can read them.
 */
export async function writeFileAtomic(filePath: string, text: string, mode = 0o600): Promise<void> {
    const temporary = path.join(
        path.dirname(filePath),
        `.${path.basename(filePath)}.${process.pid}.${crypto.randomBytes(TEMPORARY_RANDOM_BYTES).toString("hex")}.tmp`
    );
    try {
        const handle = await fs.open(temporary, "wx", mode);
        try {
            await handle.writeFile(text, "utf8");
            await handle.sync();
        } finally {
            await handle.close();
        }
        await fs.rename(temporary, filePath);
    } catch (error) {
        await fs.rm(temporary, { force: true });
        throw error;
    }
    await syncDirectory(path.dirname(filePath));
}

/**
 * Removes the temporary files writeFileAtomic left beside `filePath` when its process was killed
 * mid-write (`.<name>.<pid>.<hex>.tmp`, nothing else): they hold what was being written, the
 * settings' every key secret among it, readable long after. Call it only while holding the data
 * directory's lock (host/store/DataDirectoryLock.ts), before writing `filePath`: then no other
 * writer of it runs. Returns the names removed.
 */
export async function removeStaleTemporaries(filePath: string): Promise<readonly string[]> {
    const directory = path.dirname(filePath);
    const pattern = new RegExp(`^\\.${escapeRegExp(path.basename(filePath))}\\.\\d+\\.[0-9a-f]{${TEMPORARY_RANDOM_BYTES * 2}}\\.tmp$`);
    let names: string[];
    try {
        names = await fs.readdir(directory);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
            return [];
        }
        throw error;
    }
    const stale = names.filter((name) => pattern.test(name));
    for (const name of stale) {
        await fs.rm(path.join(directory, name), { force: true });
    }
    if (stale.length > 0) {
        await syncDirectory(directory);
    }
    return stale;
}

function escapeRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Flushes a directory's entries (a rename, a new or deleted file) to disk. Windows cannot open a
 * directory for flushing, and NTFS journals renames itself, so there it does nothing.
 */
export async function syncDirectory(directory: string): Promise<void> {
    if (process.platform === "win32") {
        return;
    }
    const handle = await fs.open(directory, "r");
    try {
        await handle.sync();
    } finally {
        await handle.close();
    }
}
