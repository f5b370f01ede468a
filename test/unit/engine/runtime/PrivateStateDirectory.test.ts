import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrivateStateDirectory, sweepStaleDirectories } from "../../../../engine/runtime/PrivateStateDirectory.js";

/** Readings of a file system's free space until one is unchanged across the checks made on it. */
const MAX_SPACE_READINGS = 50;

describe("PrivateStateDirectory", () => {
    let root: string;
    beforeEach(() => {
        root = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-state-root-"));
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it("is a directory only its owner can enter", () => {
        const directory = PrivateStateDirectory.create(root);
        expect(fs.statSync(directory.path).mode & 0o777).toBe(0o700);
        directory.dispose();
        expect(fs.existsSync(directory.path)).toBe(false);
        directory.dispose(); // idempotent
    });

    it("removes a state file as soon as it is read, and writes new ones owner-only", () => {
        const directory = PrivateStateDirectory.create(root);
        const filePath = directory.nextFilePath("req-1/../escape");
        expect(path.dirname(filePath)).toBe(directory.path);
        directory.writeExclusive(filePath, Buffer.from("kv"));
        expect(fs.statSync(filePath).mode & 0o777).toBe(0o600);
        expect(() => directory.writeExclusive(filePath, Buffer.from("again"))).toThrow(/EEXIST/);
        expect(directory.readAndRemove(filePath).toString()).toBe("kv");
        expect(directory.listFiles()).toEqual([]);
        directory.dispose();
    });

    it("refuses a root it cannot make its directory in with a typed error naming the root (ENOTDIR stops root too)", () => {
        fs.writeFileSync(path.join(root, "file"), "");
        const unmakeable = path.join(root, "file", "states");
        expect(() => PrivateStateDirectory.create(unmakeable)).toThrow(
            expect.objectContaining({
                code: "state_directory_unwritable",
                stage: "start",
                directory: unmakeable,
                message: expect.stringMatching(
                    /^Kvault cannot write KV state files in .+\/file\/states: ENOTDIR: not a directory\. .+ then start it again\.$/
                )
            })
        );
    });

    it("says the directory is gone, not what the system call said, when something else took its place", () => {
        const directory = PrivateStateDirectory.create(root);
        fs.rmSync(directory.path, { recursive: true });
        fs.writeFileSync(directory.path, "not a directory");
        expect(() => directory.writeExclusive(directory.nextFilePath("req-1"), Buffer.alloc(100))).toThrow(
            expect.objectContaining({
                code: "state_directory_unwritable",
                stage: "request",
                numBytesNeeded: 100,
                message:
                    `This request's KV state (100 bytes) could not be written to the private state directory ${directory.path}: something that is not a directory ` +
                    "has taken its place. Nothing was generated and its pages were released. Make the directory writable again (or restart the engine, which makes a new one), then send the message again."
            })
        );
        fs.rmSync(directory.path);
        directory.dispose();
    });

    it("asks the file system for room before a state is written, in whole blocks, and says how much is missing", () => {
        const directory = PrivateStateDirectory.create(root);
        // Other processes write to this file system meanwhile (the rest of the suite): the checks count only when
        // the free space read before them is still the free space after them.
        const check = () => {
            const stats = fs.statfsSync(directory.path);
            const free = stats.bavail * stats.bsize;
            const outcome = (numBytes: number): unknown => {
                try {
                    directory.ensureRoom(numBytes);
                    return "room";
                } catch (error) {
                    return error;
                }
            };
            const justUnder = outcome(free - stats.bsize);
            const justOver = outcome(free + 1);
            return { stable: fs.statfsSync(directory.path).bavail === stats.bavail, free, blockBytes: stats.bsize, justUnder, justOver };
        };
        let checked = check();
        for (let attempt = 1; attempt < MAX_SPACE_READINGS && !checked.stable; attempt++) {
            checked = check();
        }
        const { free, blockBytes } = checked;
        expect(checked.stable, `the free space changed during each of ${MAX_SPACE_READINGS} readings`).toBe(true);
        expect(checked.justUnder).toBe("room");
        expect(checked.justOver).toEqual(
            expect.objectContaining({
                code: "state_directory_full",
                numBytesNeeded: free + blockBytes,
                numBytesFree: free,
                message:
                    `The file system of the KV state directory ${directory.path} is full: this request's KV state needs ${(free + blockBytes).toLocaleString("en-US")} bytes ` +
                    `and ${free.toLocaleString("en-US")} bytes are free. Nothing was generated and its pages were released. Free space there, then send the message again.`
            })
        );
        directory.dispose();
    });

    it("sweeps directories left by engines that are gone, and keeps live ones", () => {
        const deadPid = 2 ** 22 + 12345; // above Linux's pid_max: no such process
        fs.mkdirSync(path.join(root, `kvault-state-${deadPid}-abcdef`));
        fs.writeFileSync(path.join(root, `kvault-state-${deadPid}-abcdef`, "leftover.state"), "stale KV");
        const live = PrivateStateDirectory.create(root);
        expect(fs.readdirSync(root)).toEqual([path.basename(live.path)]);
        expect(sweepStaleDirectories(root)).toEqual([]);
        live.dispose();
    });
});
