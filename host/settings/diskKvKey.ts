import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { KvaultError } from "../../engine/index.js";

/** AES-256's key, in bytes. */
const KEY_BYTES = 32;

/** Where the workspaces that keep their KV on disk keep it, inside the data directory. */
export const DISK_KV_DIRECTORY = "kv-state";

/** The headless server's key file, inside the data directory: readable by its owner alone. */
export const DISK_KV_KEY_FILE = "kv-state.key";

export class DiskKvKeyError extends KvaultError {
    readonly code = "disk_kv_key_unusable";
}

/** The engine's `kvDisk`: the data directory's state folder and the key that seals its files. */
export function diskKvConfig(dataDirectory: string, key: string): { readonly directory: string; readonly key: string } {
    return { directory: path.join(dataDirectory, DISK_KV_DIRECTORY), key };
}

/**
 * The key (base64) in `file`, made with a fresh random key (mode 0600) when there is none. A file
 * others may read, or that holds no 32-byte key, is refused: its states could be read, or never opened.
 */
export function readOrCreateDiskKvKeyFile(file: string): string {
    try {
        fs.writeFileSync(file, crypto.randomBytes(KEY_BYTES).toString("base64"), { mode: 0o600, flag: "wx" });
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
            throw new DiskKvKeyError(
                `The KV key file ${file} could not be made (${(error as Error).message}); check the data directory's permissions.`
            );
        }
    }
    const stat = fs.statSync(file);
    if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
        throw new DiskKvKeyError(
            `The KV key file ${file} has mode ${(stat.mode & 0o777).toString(8)}: others may read it. Run chmod 600 on it, or delete it and the ${DISK_KV_DIRECTORY} folder to start over.`
        );
    }
    const key = fs.readFileSync(file, "utf8").trim();
    if (Buffer.from(key, "base64").length !== KEY_BYTES) {
        throw new DiskKvKeyError(
            `The KV key file ${file} holds no ${KEY_BYTES}-byte key in base64; delete it and the ${DISK_KV_DIRECTORY} folder, and a new one is made at the next start.`
        );
    }
    return key;
}
