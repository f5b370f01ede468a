import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// State roots the engine processes of a test make their private directories in (EngineConfig's
// stateRoot), so a test sees, fills, breaks and checks only its own engines' state files.

/** A fresh, empty state root under the OS temp directory. */
export function makeStateRoot(label: string): string {
    return fs.mkdtempSync(path.join(os.tmpdir(), `kvault-${label}-`));
}

/** Engine state directories in `root` (of one engine process, when `pid` is given). */
export function engineDirectoriesIn(root: string, pid?: number): string[] {
    const prefix = pid === undefined ? "kvault-state-" : `kvault-state-${pid}-`;
    return fs
        .readdirSync(root)
        .filter((name) => name.startsWith(prefix))
        .map((name) => path.join(root, name));
}

export interface SmallFileSystem {
    readonly path: string;
    /** Remounts read-only (EROFS for every writer, root included) or writable again. */
    setReadOnly(readOnly: boolean): void;
    /** Unmounts and removes the mount point. Idempotent. */
    dispose(): void;
}

/**
 * A tmpfs of `numBytes` of its own, mounted under the OS temp directory: a file system that really
 * fills up (ENOSPC) and really turns read-only (EROFS), without touching /dev/shm, which other
 * processes use. Mounting needs root (or CAP_SYS_ADMIN); where it is refused this returns why.
 */
export function mountSmallFileSystem(numBytes: number): SmallFileSystem | { readonly unavailable: string } {
    const mountPoint = makeStateRoot("small-fs");
    try {
        execFileSync("mount", ["-t", "tmpfs", "-o", `size=${numBytes},mode=0700`, "tmpfs", mountPoint], { stdio: "pipe" });
    } catch (error) {
        fs.rmSync(mountPoint, { recursive: true, force: true });
        return {
            unavailable: `mounting a tmpfs was refused (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); this test needs root or CAP_SYS_ADMIN`
        };
    }
    let mounted = true;
    return {
        path: mountPoint,
        setReadOnly(readOnly) {
            execFileSync("mount", ["-o", `remount,${readOnly ? "ro" : "rw"}`, mountPoint], { stdio: "pipe" });
        },
        dispose() {
            if (!mounted) {
                return;
            }
            mounted = false;
            execFileSync("umount", [mountPoint], { stdio: "pipe" });
            fs.rmSync(mountPoint, { recursive: true, force: true });
        }
    };
}

/** Free bytes of the file system holding `directory`, for an unprivileged writer. */
export function freeBytesOf(directory: string): number {
    const stats = fs.statfsSync(directory);
    return stats.bavail * stats.bsize;
}

/**
 * Fills the file system of `directory` with a filler file until `leaveFree` bytes (whole blocks)
 * remain, with real writes; returns how to remove the filler again.
 */
export function fillFileSystem(directory: string, leaveFree: number): () => void {
    const filler = path.join(directory, "filler");
    const toWrite = freeBytesOf(directory) - leaveFree;
    const chunk = Buffer.alloc(64 * 1024, 0xaa);
    const descriptor = fs.openSync(filler, "w");
    try {
        for (let written = 0; written < toWrite; ) {
            written += fs.writeSync(descriptor, chunk, 0, Math.min(chunk.length, toWrite - written));
        }
    } finally {
        fs.closeSync(descriptor);
    }
    return () => fs.rmSync(filler, { force: true });
}
