import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import crypto from "node:crypto";

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

    static create(root = defaultRoot()): PrivateStateDirectory {
        sweepStaleDirectories(root);
        const directory = path.join(root, `${DIRECTORY_PREFIX}${process.pid}-${crypto.randomBytes(6).toString("hex")}`);
        fs.mkdirSync(directory, { mode: 0o700 });
        fs.chmodSync(directory, 0o700); // mkdir's mode is filtered by the umask
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

    writeExclusive(filePath: string, bytes: Uint8Array): void {
        fs.writeFileSync(filePath, bytes, { mode: 0o600, flag: "wx" });
    }

    remove(filePath: string): void {
        fs.rmSync(filePath, { force: true });
    }

    listFiles(): string[] {
        return this.disposed ? [] : fs.readdirSync(this.path);
    }

    dispose(): void {
        if (this.disposed)
            return;
        this.disposed = true;
        fs.rmSync(this.path, { recursive: true, force: true });
    }
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
        if (match == null || isProcessAlive(Number(match[1])))
            continue;
        fs.rmSync(path.join(root, name), { recursive: true, force: true });
        swept.push(name);
    }
    return swept;
}
