import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DataDirectoryLock, DataDirectoryLockedError, LOCK_FILE_NAME, type LockHolder } from "../../../../host/store/DataDirectoryLock.js";
import { processStartToken } from "../../../../host/store/processStartToken.js";
import { repositoryRoot } from "../../../support/generatedModels.js";

let directory: string;
let lines: string[];
const options = (): { owner: string; log: (line: string) => void } => ({ owner: "npm run serve", log: (line) => void lines.push(line) });

beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-lock-"));
    lines = [];
});
afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

const lockPath = (): string => path.join(directory, LOCK_FILE_NAME);
const holderOnDisk = (): LockHolder => JSON.parse(fs.readFileSync(lockPath(), "utf8")) as LockHolder;
function writeHolder(holder: Partial<LockHolder>): void {
    const full: LockHolder = {
        pid: process.pid,
        startToken: null,
        hostname: os.hostname(),
        owner: "npm run serve",
        since: "2026-01-05T10:00:00.000Z",
        ...holder
    };
    fs.writeFileSync(lockPath(), JSON.stringify(full));
}

/** A pid that ran and has exited (a child of this test, waited for). */
function deadPid(): number {
    const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    return Number(child.stdout);
}

describe("DataDirectoryLock: one owner per data directory", () => {
    it("takes the directory, refuses a second taker naming the holder's pid and the directory, and gives it up", () => {
        const lock = DataDirectoryLock.acquire(directory, options());
        expect(holderOnDisk()).toMatchObject({
            pid: process.pid,
            owner: "npm run serve",
            hostname: os.hostname(),
            startToken: processStartToken(process.pid)
        });
        expect(fs.statSync(lockPath()).mode & 0o777).toBe(0o600);
        let refused: unknown;
        try {
            DataDirectoryLock.acquire(directory, { ...options(), owner: "the Kvault app" });
        } catch (error) {
            refused = error;
        }
        expect(refused).toBeInstanceOf(DataDirectoryLockedError);
        expect((refused as DataDirectoryLockedError).code).toBe("data_directory_locked");
        expect((refused as Error).message).toMatch(
            new RegExp(
                `^The data directory ${directory} is in use by another Kvault \\(npm run serve, pid ${process.pid}, since \\S+\\)\\. .*Stop that one first`
            )
        );
        lock.release();
        lock.release();
        expect(fs.readdirSync(directory)).toEqual([]);
        DataDirectoryLock.acquire(directory, options()).release();
        expect(lines).toEqual([]);
    });

    it("takes over the lock of a process that is gone, saying so", () => {
        const pid = deadPid();
        writeHolder({ pid, owner: "npm run serve" });
        const lock = DataDirectoryLock.acquire(directory, options());
        expect(holderOnDisk().pid).toBe(process.pid);
        expect(lines).toEqual([
            `The data directory ${directory} was held by npm run serve (pid ${pid}), which is no longer running; took it over.`
        ]);
        lock.release();
    });

    it("tells a live pid from a reused one by its start time, where the OS says it (Linux)", () => {
        writeHolder({ pid: process.pid, startToken: "1" });
        if (processStartToken(process.pid) === null) {
            expect(() => DataDirectoryLock.acquire(directory, options())).toThrow(DataDirectoryLockedError);
        } else {
            DataDirectoryLock.acquire(directory, options()).release();
            expect(lines).toHaveLength(1);
        }
    });

    it("refuses a lock from another machine (a shared folder), and says how to clear it", () => {
        writeHolder({ pid: deadPid(), hostname: "elsewhere.example" });
        expect(() => DataDirectoryLock.acquire(directory, options())).toThrow(
            `; if no Kvault runs on elsewhere.example, delete ${lockPath()}.`
        );
    });

    it("takes over a damaged lock file, saying so", () => {
        fs.writeFileSync(lockPath(), "{ not json");
        DataDirectoryLock.acquire(directory, options()).release();
        expect(lines).toEqual([`The lock file ${lockPath()} could not be read (it is damaged); took it over.`]);
    });

    it("release leaves a lock that is no longer its own", () => {
        const lock = DataDirectoryLock.acquire(directory, options());
        writeHolder({ pid: 1, since: "2026-02-01T00:00:00.000Z" });
        lock.release();
        expect(holderOnDisk().pid).toBe(1);
    });

    it("of six processes racing for a directory with a stale lock, exactly one gets it", async () => {
        writeHolder({ pid: deadPid() });
        const hook = path.join(repositoryRoot, "host", "store", "DataDirectoryLock.ts");
        // The winner holds on until the test ends it, so a racer that starts late still meets a live holder.
        const script = `import { DataDirectoryLock } from ${JSON.stringify(hook)};
try { DataDirectoryLock.acquire(${JSON.stringify(directory)}, { owner: "racer" }); process.stdout.write("won"); setInterval(() => undefined, 1000); }
catch (error) { process.stdout.write(error.code); process.exit(0); }`;
        const racers = Array.from({ length: 6 }, () =>
            spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: repositoryRoot })
        );
        try {
            const outcomes = await Promise.all(
                racers.map(
                    (child) =>
                        new Promise<string>((resolve) => {
                            let out = "";
                            child.stdout.on("data", (chunk: Buffer) => {
                                out += chunk.toString();
                                resolve(out);
                            });
                            child.stderr.on("data", (chunk: Buffer) => void (out += chunk.toString()));
                            child.on("close", () => resolve(out));
                        })
                )
            );
            expect(
                outcomes.filter((outcome) => outcome === "won"),
                outcomes.join("\n")
            ).toHaveLength(1);
            expect(
                outcomes.filter((outcome) => outcome === "data_directory_locked"),
                outcomes.join("\n")
            ).toHaveLength(5);
        } finally {
            racers.forEach((child) => child.kill("SIGKILL"));
        }
    }, 60_000);
});
