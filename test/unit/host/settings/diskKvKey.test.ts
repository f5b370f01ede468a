// The headless server's key for workspaces' KV on disk: made once, 0600, the same at every start; a readable or damaged file is refused with what to do.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readOrCreateDiskKvKeyFile } from "../../../../host/settings/diskKvKey.js";

describe("readOrCreateDiskKvKeyFile", () => {
    const directories: string[] = [];
    const keyFile = (): string => {
        const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-key-"));
        directories.push(directory);
        return path.join(directory, "kv-state.key");
    };
    afterEach(() => directories.splice(0).forEach((directory) => fs.rmSync(directory, { recursive: true, force: true })));

    it("makes a 32-byte key readable by its owner alone, and reads the same one at the next start", () => {
        const file = keyFile();
        const key = readOrCreateDiskKvKeyFile(file);
        expect(Buffer.from(key, "base64")).toHaveLength(32);
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
        expect(readOrCreateDiskKvKeyFile(file)).toBe(key);
    });

    it("refuses a key file others may read, and one that holds no key", () => {
        const readable = keyFile();
        readOrCreateDiskKvKeyFile(readable);
        fs.chmodSync(readable, 0o644);
        expect(() => readOrCreateDiskKvKeyFile(readable)).toThrow(
            expect.objectContaining({ code: "disk_kv_key_unusable", message: expect.stringMatching(/mode 644.*chmod 600/) })
        );
        const damaged = keyFile();
        fs.writeFileSync(damaged, "short", { mode: 0o600 });
        expect(() => readOrCreateDiskKvKeyFile(damaged)).toThrow(expect.objectContaining({ code: "disk_kv_key_unusable" }));
    });
});
