import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrivateStateDirectory, sweepStaleDirectories } from "../../../engine/runtime/PrivateStateDirectory.js";

describe("PrivateStateDirectory", () => {
    let root: string;
    beforeEach(() => { root = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-state-root-")); });
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
