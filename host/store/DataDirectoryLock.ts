// One owner per data directory (the headless server's --data-dir, the app's userData): two
// Kvaults on one directory would each trust their own copy of the workspace list and chats, and
// silently undo each other's acknowledged writes. The owner holds `kvault.lock`, made atomically
// (written beside, then hard-linked into place, which fails if it exists) with its pid and its
// process start time. A lock whose process is gone (killed, crashed, its pid reused since) is
// taken over, saying so; a live one refuses the second Kvault with the holder's pid.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { KvaultError } from "../../engine/index.js";
import { processStartToken } from "./processStartToken.js";

export const LOCK_FILE_NAME = "kvault.lock";

/** Who holds a data directory: what the lock file says. */
export interface LockHolder {
    readonly pid: number;
    /** The holder's start time as its OS tells it (Linux: /proc/PID/stat); null where there is none. */
    readonly startToken: string | null;
    readonly hostname: string;
    /** What it is: "npm run serve", "the Kvault app". */
    readonly owner: string;
    /** ISO time it took the lock. */
    readonly since: string;
}

/** Another live Kvault holds the data directory; nothing was read or written. */
export class DataDirectoryLockedError extends KvaultError {
    readonly code = "data_directory_locked";

    constructor(
        readonly directory: string,
        readonly holder: LockHolder
    ) {
        const where = holder.hostname === os.hostname() ? "" : ` on ${holder.hostname}`;
        super(
            `The data directory ${directory} is in use by another Kvault (${holder.owner}, pid ${holder.pid}${where}, since ${holder.since}). ` +
                "Two servers on one directory would undo each other's saved changes. Stop that one first, or give this one another data directory" +
                (where === "" ? "." : `; if no Kvault runs on ${holder.hostname}, delete ${path.join(directory, LOCK_FILE_NAME)}.`)
        );
    }
}

/** The lock file could not be made or read (a read-only or full disk); nothing was written to the directory. */
export class DataDirectoryLockError extends KvaultError {
    readonly code = "data_directory_unlockable";
}

export interface DataDirectoryLockOptions {
    /** What the holder is, for the message a second Kvault shows. */
    readonly owner: string;
    readonly log?: (line: string) => void;
    /** Whether a process runs with this pid and start token; by default the OS's answer (tests give their own processes). */
    readonly isRunning?: (pid: number, startToken: string | null) => boolean;
}

/** How many times a lock found stale is taken over before giving up (another Kvault racing for it each time). */
const MAX_ATTEMPTS = 5;
/** A takeover in progress (another starting Kvault) is waited for this long at most, in steps. */
const TAKEOVER_WAIT_MS = 2_000;
const TAKEOVER_STEP_MS = 25;

export class DataDirectoryLock {
    #released = false;

    private constructor(
        readonly directory: string,
        readonly lockPath: string,
        private readonly holder: LockHolder
    ) {}

    /**
     * Takes the directory (which must exist) for this process. Throws DataDirectoryLockedError when
     * a live Kvault holds it, DataDirectoryLockError when the lock file cannot be made.
     */
    static acquire(directory: string, options: DataDirectoryLockOptions): DataDirectoryLock {
        const lockPath = path.join(directory, LOCK_FILE_NAME);
        const isRunning = options.isRunning ?? isProcessRunning;
        const holder: LockHolder = {
            pid: process.pid,
            startToken: processStartToken(process.pid),
            hostname: os.hostname(),
            owner: options.owner,
            since: new Date().toISOString()
        };
        for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            if (createLockFile(lockPath, holder)) {
                return new DataDirectoryLock(directory, lockPath, holder);
            }
            const found = readHolder(lockPath);
            if (found === "gone") {
                continue; // released between our attempt and our look: try again
            }
            if (found !== "unreadable" && (found.hostname !== holder.hostname || isRunning(found.pid, found.startToken))) {
                throw new DataDirectoryLockedError(directory, found);
            }
            if (takeOver(lockPath, found)) {
                options.log?.(
                    found === "unreadable"
                        ? `The lock file ${lockPath} could not be read (it is damaged); took it over.`
                        : `The data directory ${directory} was held by ${found.owner} (pid ${found.pid}), which is no longer running; took it over.`
                );
            }
        }
        throw new DataDirectoryLockError(
            `Could not take the data directory ${directory}: its lock ${lockPath} changed hands ${MAX_ATTEMPTS} times while this Kvault started. Start it again.`
        );
    }

    /** Gives the directory up (the lock file goes, if it is still this process's). Idempotent; never throws. */
    release(): void {
        if (this.#released) {
            return;
        }
        this.#released = true;
        const found = readHolder(this.lockPath);
        if (typeof found === "object" && found.pid === this.holder.pid && found.since === this.holder.since) {
            fs.rmSync(this.lockPath, { force: true });
        }
    }
}

/** Writes the holder beside the lock and links it into place: the lock file exists whole, or not at all. False if it exists. */
function createLockFile(lockPath: string, holder: LockHolder): boolean {
    const staging = `${lockPath}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
        fs.writeFileSync(staging, `${JSON.stringify(holder)}\n`, { flag: "wx", mode: 0o600 });
        try {
            fs.linkSync(staging, lockPath);
            return true;
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code === "EEXIST") {
                return false;
            }
            throw error;
        }
    } catch (error) {
        throw new DataDirectoryLockError(
            `Could not make the lock file ${lockPath} (${(error as Error).message}). Check that the data directory is writable and the disk is not full.`,
            { cause: error }
        );
    } finally {
        fs.rmSync(staging, { force: true });
    }
}

function readHolder(lockPath: string): LockHolder | "gone" | "unreadable" {
    let text: string;
    try {
        text = fs.readFileSync(lockPath, "utf8");
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
            return "gone";
        }
        throw new DataDirectoryLockError(`Could not read the lock file ${lockPath} (${(error as Error).message}).`, { cause: error });
    }
    try {
        const value = JSON.parse(text) as Partial<LockHolder>;
        if (
            typeof value.pid === "number" &&
            Number.isSafeInteger(value.pid) &&
            value.pid > 0 &&
            (typeof value.startToken === "string" || value.startToken === null) &&
            typeof value.hostname === "string" &&
            typeof value.owner === "string" &&
            typeof value.since === "string"
        ) {
            return value as LockHolder;
        }
    } catch {
        // not JSON: reported as unreadable
    }
    return "unreadable";
}

/**
 * Removes a stale lock, unless it changed since it was read: under a short-lived second lock
 * (O_EXCL), so that two Kvaults starting together cannot both remove it, one of them the other's
 * fresh lock. False when another Kvault is doing it (the caller looks again).
 */
function takeOver(lockPath: string, stale: LockHolder | "unreadable"): boolean {
    const guard = `${lockPath}.takeover`;
    let fd: number;
    try {
        fd = fs.openSync(guard, "wx", 0o600);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
            throw new DataDirectoryLockError(`Could not make ${guard} (${(error as Error).message}).`, { cause: error });
        }
        waitForTakeover(guard);
        return false;
    }
    try {
        const now = readHolder(lockPath);
        const unchanged =
            stale === "unreadable" ? now === "unreadable" : typeof now === "object" && now.pid === stale.pid && now.since === stale.since;
        if (unchanged) {
            fs.rmSync(lockPath, { force: true });
        }
        return unchanged;
    } finally {
        fs.closeSync(fd);
        fs.rmSync(guard, { force: true });
    }
}

/** Waits (bounded) for another Kvault's takeover to end; one left by a process killed mid-takeover is removed. */
function waitForTakeover(guard: string): void {
    const deadline = Date.now() + TAKEOVER_WAIT_MS;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (fs.existsSync(guard) && Date.now() < deadline) {
        Atomics.wait(pause, 0, 0, TAKEOVER_STEP_MS);
    }
    if (fs.existsSync(guard)) {
        fs.rmSync(guard, { force: true });
    }
}

/** process.kill(pid, 0): ESRCH means no such process; EPERM, one of another user. A start token that differs means the pid was reused. */
function isProcessRunning(pid: number, startToken: string | null): boolean {
    try {
        process.kill(pid, 0);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EPERM") {
            return false;
        }
    }
    const current = processStartToken(pid);
    return startToken === null || current === null || current === startToken;
}
