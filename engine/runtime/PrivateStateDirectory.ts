import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";
import { StateDirectoryFullError, StateDirectoryUnwritableError, type StateWriteStage } from "./stateDirectoryErrors.js";

const DIRECTORY_PREFIX = "kvault-state-";

/**
 * Where sequence state files live for the instant between llama.cpp writing one and the engine
 * reading it: a directory only this user can enter (0700), on a RAM-backed file system where the
 * OS offers one (/dev/shm on Linux), so KV bytes never reach a disk. Each file is removed as soon
 * as it is read; at start, directories left by engines that died are swept.
 */
export class PrivateStateDirectory {
    private disposed = false;
    private numFiles = 0;

    private constructor(readonly path: string) {}

    /** Throws `StateDirectoryUnwritableError` when `root` cannot hold the directory. */
    static create(root = defaultRoot()): PrivateStateDirectory {
        const directory = path.join(root, `${DIRECTORY_PREFIX}${process.pid}-${crypto.randomBytes(6).toString("hex")}`);
        try {
            sweepStaleDirectories(root);
            fs.mkdirSync(directory, { mode: 0o700 });
            fs.chmodSync(directory, 0o700); // mkdir's mode is filtered by the umask
        } catch (error) {
            throw new StateDirectoryUnwritableError(root, describeErrno(error), "start", undefined, error);
        }
        return new PrivateStateDirectory(directory);
    }

    /** A fresh file path inside the directory; the caller removes it with `remove` once read. */
    nextFilePath(label: string): string {
        this.numFiles++;
        return path.join(this.path, `${label.replace(/[^a-zA-Z0-9_-]/g, "_")}-${this.numFiles}.state`);
    }

    /** Reads a state file and removes it at once, whether or not the read succeeded. */
    readAndRemove(filePath: string): Buffer {
        try {
            return fs.readFileSync(filePath);
        } finally {
            fs.rmSync(filePath, { force: true });
        }
    }

    /**
     * Writes a new file (0600, never over an existing one) of `chunks` in order, in one gathered
     * write: a state assembled from pages reaches the file without a buffer of its size. Throws
     * `StateDirectoryFullError` or `StateDirectoryUnwritableError` when the write fails for want
     * of room or of a directory.
     */
    writeExclusive(filePath: string, bytes: Uint8Array | readonly Uint8Array[], numBytes?: number): void {
        const chunks = ArrayBuffer.isView(bytes) ? [bytes] : bytes;
        numBytes ??= chunks.reduce((sum, chunk) => sum + chunk.length, 0);
        let fd: number | undefined;
        try {
            fd = fs.openSync(filePath, "wx", 0o600);
            const numWritten = fs.writevSync(fd, chunks as NodeJS.ArrayBufferView[]);
            if (numWritten !== numBytes) {
                throw new Error(`wrote ${numWritten} of the state file's ${numBytes} bytes`);
            }
            fs.closeSync(fd);
            fd = undefined;
        } catch (error) {
            if (fd !== undefined) {
                fs.closeSync(fd);
            }
            if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
                // the file is not this write's
                this.remove(filePath);
            } // a short file, when the file system filled up midway
            throw this.explainWriteFailure(error, numBytes, "request");
        }
    }

    /**
     * Asks before a state of `numBytes` is written: throws `StateDirectoryFullError`, with the
     * numbers, when the file system has fewer whole blocks free than the file needs. Saves a write
     * that would fail halfway; the write's own failure is still explained (`explainWriteFailure`),
     * since anything else on the file system may take the room in between.
     */
    ensureRoom(numBytes: number): void {
        const space = freeSpace(this.path);
        if (space === undefined) {
            return;
        } // the directory is gone: the write fails and is explained
        const numBytesNeeded = Math.ceil(numBytes / space.blockBytes) * space.blockBytes;
        if (space.numBytesFree < numBytesNeeded) {
            throw new StateDirectoryFullError(this.path, "request", numBytesNeeded, space.numBytesFree);
        }
    }

    /**
     * What a failed write of a state file means, found by looking at the directory, since
     * llama.cpp reports only that it failed: `StateDirectoryUnwritableError` when the directory is
     * gone, not a directory, or not writable (a read-only file system stops root too),
     * `StateDirectoryFullError` when its file system has no room for `numBytes` (when unknown, only
     * an empty file system counts). Anything else is returned as it came.
     */
    explainWriteFailure(error: unknown, numBytes: number | undefined, stage: StateWriteStage): Error {
        const unwritable = (why: string): Error => new StateDirectoryUnwritableError(this.path, why, stage, numBytes, error);
        let stat: fs.Stats;
        try {
            stat = fs.lstatSync(this.path);
        } catch (lstatError) {
            return unwritable(`the directory is gone (${describeErrno(lstatError)})`);
        }
        if (!stat.isDirectory()) {
            return unwritable("something that is not a directory has taken its place");
        }
        try {
            fs.accessSync(this.path, fs.constants.W_OK);
        } catch (accessError) {
            return unwritable(describeErrno(accessError));
        }
        const space = freeSpace(this.path);
        const code = (error as NodeJS.ErrnoException | undefined)?.code;
        const numBytesNeeded =
            numBytes === undefined || space === undefined ? undefined : Math.ceil(numBytes / space.blockBytes) * space.blockBytes;
        if (
            space !== undefined &&
            (code === "ENOSPC" ||
                code === "EDQUOT" ||
                code === "EFBIG" ||
                space.numBytesFree === 0 ||
                (numBytesNeeded !== undefined && space.numBytesFree < numBytesNeeded))
        ) {
            return new StateDirectoryFullError(this.path, stage, numBytesNeeded, space.numBytesFree, error);
        }
        if (code === "EROFS" || code === "EACCES" || code === "EPERM" || code === "ENOTDIR" || code === "ENOENT") {
            return unwritable(describeErrno(error));
        }
        return error instanceof Error ? error : new Error(String(error));
    }

    /** Removes a state file if it is there; a directory that is gone has nothing left to remove. */
    remove(filePath: string): void {
        try {
            fs.rmSync(filePath, { force: true });
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOTDIR") {
                throw error;
            }
        }
    }

    listFiles(): string[] {
        return this.disposed ? [] : fs.readdirSync(this.path);
    }

    dispose(): void {
        if (this.disposed) {
            return;
        }
        this.disposed = true;
        fs.rmSync(this.path, { recursive: true, force: true });
    }
}

/** Free bytes for an unprivileged writer and the block size, or undefined when the path is gone. */
function freeSpace(directory: string): { numBytesFree: number; blockBytes: number } | undefined {
    try {
        const stats = fs.statfsSync(directory);
        return { numBytesFree: stats.bavail * stats.bsize, blockBytes: stats.bsize };
    } catch {
        return undefined;
    }
}

/** "ENOTDIR: not a directory", from a Node file system error's code and message. */
function describeErrno(error: unknown): string {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    const reason = error instanceof Error ? error.message.replace(/^[A-Z]+: /, "").replace(/, \w+ '.*'$/, "") : String(error);
    return code === undefined ? reason : `${code}: ${reason}`;
}

function defaultRoot(): string {
    const ramBacked = "/dev/shm";
    try {
        fs.accessSync(ramBacked, fs.constants.W_OK);
        return ramBacked;
    } catch {
        return os.tmpdir();
    }
}

/** Whether a process with this pid exists (EPERM: it exists, owned by someone else). */
export function isProcessAlive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return (error as NodeJS.ErrnoException).code === "EPERM";
    }
}

/** Removes state directories whose engine process is gone. */
export function sweepStaleDirectories(root: string): string[] {
    const swept: string[] = [];
    for (const name of fs.existsSync(root) ? fs.readdirSync(root) : []) {
        const match = /^kvault-state-(\d+)-[0-9a-f]+$/.exec(name);
        if (match == null || isProcessAlive(Number(match[1]))) {
            continue;
        }
        fs.rmSync(path.join(root, name), { recursive: true, force: true });
        swept.push(name);
    }
    return swept;
}
