// The last step of a download whose bytes have all arrived: each part's partial file becomes its
// own file (llama.cpp's parts, side by side, or a file that is not split), or binary parts are
// joined into the download's file.
import fs from "node:fs";
import type { DownloadPart } from "./downloadLayout.js";
import { partialPath } from "./partialDownloads.js";

/** Bytes copied per read while binary parts are joined: memory stays this, whatever the parts' sizes. */
const JOIN_CHUNK_BYTES = 1024 * 1024;

/**
 * Makes the final files of a download whose parts' partial files hold all their bytes, `numBytes[i]`
 * for part i (the progress written after them is dropped): each part renamed to its own file, or,
 * when `joined`, every next part appended to the first and deleted once appended (so the disk holds
 * at most one part twice), and the first renamed to `filePath`.
 */
export async function finishDownloadParts(
    filePath: string,
    parts: readonly DownloadPart[],
    numBytes: readonly number[],
    joined: boolean
): Promise<void> {
    if (!joined) {
        for (const [index, part] of parts.entries()) {
            await fs.promises.truncate(partialPath(part.path), numBytes[index]!);
            fs.renameSync(partialPath(part.path), part.path);
        }
        return;
    }
    const first = partialPath(parts[0]!.path);
    const target = await fs.promises.open(first, "r+");
    try {
        await target.truncate(numBytes[0]!);
        let position = numBytes[0]!;
        const buffer = Buffer.alloc(JOIN_CHUNK_BYTES);
        for (const [index, part] of parts.entries()) {
            if (index === 0) {
                continue;
            }
            const source = await fs.promises.open(partialPath(part.path), "r");
            try {
                for (let offset = 0; offset < numBytes[index]!; ) {
                    const { bytesRead } = await source.read(buffer, 0, Math.min(JOIN_CHUNK_BYTES, numBytes[index]! - offset), offset);
                    if (bytesRead === 0) {
                        throw new Error(`the partial file of ${part.path} ended after ${offset} of its ${numBytes[index]} bytes`);
                    }
                    await target.write(buffer, 0, bytesRead, position);
                    offset += bytesRead;
                    position += bytesRead;
                }
            } finally {
                await source.close();
            }
            fs.rmSync(partialPath(part.path), { force: true });
        }
        await target.datasync();
    } finally {
        await target.close();
    }
    fs.renameSync(first, filePath);
}
