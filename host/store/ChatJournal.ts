import fs from "node:fs/promises";
import path from "node:path";
import type { BranchedChat } from "../../contract/chatBranches.js";
import { encodeJournalRecord, type JournalRecord } from "./journalRecords.js";
import { encodeJournal } from "./readJournal.js";
import { syncDirectory, writeFileAtomic } from "./writeFileAtomic.js";

/**
 * One workspace's chat file, append-only: each change is one line, written with one write call
 * and flushed to disk (fsync) before `append` resolves. A crash can therefore cut short only the
 * line being written, which readJournal sets aside as truncated; every line before it is whole.
 */
export class ChatJournal {
    constructor(readonly filePath: string) {}

    /**
     * Appends `record` and flushes it. On failure the file is cut back to its size before, so a
     * half-written line cannot glue the next append to it; the error is the caller's to report.
     */
    async append(record: JournalRecord): Promise<void> {
        const bytes = Buffer.from(encodeJournalRecord(record), "utf8");
        const handle = await fs.open(this.filePath, "a", 0o600);
        let sizeBefore = 0;
        try {
            sizeBefore = (await handle.stat()).size;
            // One write call; the loop only continues a short write (a full disk, a signal), and each pass writes at least one byte.
            for (let offset = 0; offset < bytes.length; ) {
                const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset);
                if (bytesWritten <= 0) {
                    throw new Error(`wrote 0 of ${bytes.length - offset} bytes`);
                }
                offset += bytesWritten;
            }
            await handle.sync();
        } catch (error) {
            await handle.truncate(sizeBefore).catch(() => undefined); // if this fails too, the next start sets the partial line aside
            throw error;
        } finally {
            await handle.close();
        }
        // A new file's directory entry must reach the disk too, or a power loss could lose the whole file.
        if (sizeBefore === 0) {
            await syncDirectory(path.dirname(this.filePath));
        }
    }

    /** Replaces the file with exactly `chat`, atomically: a crash leaves the old file or the new. */
    rewrite(chat: BranchedChat): Promise<void> {
        return writeFileAtomic(this.filePath, encodeJournal(chat));
    }

    /** Deletes the file (a removed workspace); a file already gone is fine. */
    async remove(): Promise<void> {
        await fs.rm(this.filePath, { force: true });
        await syncDirectory(path.dirname(this.filePath));
    }
}
