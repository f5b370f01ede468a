import { constants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { fileStamp } from "./storePaths.js";
import { syncDirectory } from "./writeFileAtomic.js";

/** Copies tried per file and time before giving up: names differ only by a counter. */
const MAX_COPY_NAMES = 100;

/**
 * Keeps `file` as it is now, beside it as `<file>.corrupt-<time>`, flushed to disk, before the
 * store rewrites it: whatever the store set aside can be read back by hand. Returns the copy's path.
 */
export async function preserveCopy(file: string, time: Date): Promise<string> {
    const base = `${file}.corrupt-${fileStamp(time)}`;
    for (let attempt = 1; attempt <= MAX_COPY_NAMES; attempt++) {
        const copy = attempt === 1 ? base : `${base}-${attempt}`;
        try {
            await fs.copyFile(file, copy, constants.COPYFILE_EXCL);
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "EEXIST") {
                continue;
            }
            throw error;
        }
        const handle = await fs.open(copy, "r+");
        try {
            await handle.sync();
        } finally {
            await handle.close();
        }
        await syncDirectory(path.dirname(copy));
        return copy;
    }
    throw new Error(`${MAX_COPY_NAMES} copies named ${base}… already exist.`);
}
