import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultSettings, serializeSettings, type KvaultSettings } from "../../../../host/settings/KvaultSettings.js";
import { SettingsFile, SettingsWriteError } from "../../../../host/settings/SettingsFile.js";
import { writeFileAtomic } from "../../../../host/store/writeFileAtomic.js";

let directory: string;
let settingsPath: string;
let logged: string[];
const options = (): { log: (line: string) => void; makeApiKey: () => string } => ({
    log: (line) => logged.push(line),
    makeApiKey: () => "kv-fixed-key-1234"
});

beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-settings-"));
    settingsPath = path.join(directory, "settings.json");
    logged = [];
});

afterEach(() => {
    fs.rmSync(directory, { recursive: true, force: true });
});

function onDisk(): unknown {
    return JSON.parse(fs.readFileSync(settingsPath, "utf8"));
}

/** What the file should hold for `settings`: its fields, without the in-memory `extra` (written as fields of their own). */
function fileText(settings: KvaultSettings): unknown {
    return JSON.parse(serializeSettings(settings));
}

function leftovers(): string[] {
    return fs.readdirSync(directory).filter((name) => name.endsWith(".tmp"));
}

describe("SettingsFile", () => {
    it("on first start writes the defaults, so the new API key is kept", async () => {
        const store = await SettingsFile.open(settingsPath, options());
        expect(store.current).toEqual(defaultSettings(() => "kv-fixed-key-1234"));
        expect(onDisk()).toEqual(fileText(store.current));
        expect(logged).toEqual([]); // a first start is not a problem
        if (process.platform !== "win32") {
            expect(fs.statSync(settingsPath).mode & 0o777).toBe(0o600); // it holds the API key
        }
    });

    it("reads back what it saved", async () => {
        const store = await SettingsFile.open(settingsPath, options());
        const next: KvaultSettings = { ...store.current, localApi: { enabled: true, port: 9000, apiKey: "kv-fixed-key-1234" } };
        await store.save(next);
        expect(store.current).toEqual(next);
        const reopened = await SettingsFile.open(settingsPath, {
            log: (line) => logged.push(line),
            makeApiKey: () => "kv-other-key-9999"
        });
        expect(reopened.current).toEqual(next);
        expect(leftovers()).toEqual([]);
    });

    it("does not rewrite a file that is already as it should be", async () => {
        await SettingsFile.open(settingsPath, options());
        const before = fs.statSync(settingsPath).mtimeMs;
        fs.utimesSync(settingsPath, new Date(0), new Date(0));
        await SettingsFile.open(settingsPath, options());
        expect(fs.statSync(settingsPath).mtimeMs).toBe(0);
        expect(before).toBeGreaterThan(0);
    });

    it("moves an unreadable file aside instead of overwriting it, and starts with the defaults", async () => {
        fs.writeFileSync(settingsPath, '{ "localApi": { "enabled": tru');
        const store = await SettingsFile.open(settingsPath, options());
        expect(store.current).toEqual(defaultSettings(() => "kv-fixed-key-1234"));
        const aside = fs.readdirSync(directory).filter((name) => name.startsWith("settings.json.unreadable-"));
        expect(aside).toHaveLength(1);
        expect(fs.readFileSync(path.join(directory, aside[0]!), "utf8")).toBe('{ "localApi": { "enabled": tru');
        expect(logged[0]).toMatch(/not JSON/);
        expect(store.problems[0]).toMatch(/not JSON/); // the settings screen shows it too
    });

    it("repairs a bad field and writes the repair back", async () => {
        fs.writeFileSync(
            settingsPath,
            JSON.stringify({ version: 1, localApi: { enabled: true, port: "80", apiKey: "kv-fixed-key-1234" }, modelPath: null })
        );
        const store = await SettingsFile.open(settingsPath, options());
        expect(store.current.localApi).toEqual({ enabled: true, port: 8080, apiKey: "kv-fixed-key-1234" });
        expect(onDisk()).toEqual(fileText(store.current));
    });

    it("a failed save keeps the old settings, in memory and on disk, and leaves no temporary file", async () => {
        const store = await SettingsFile.open(settingsPath, options());
        const before = fs.readFileSync(settingsPath, "utf8");
        fs.rmSync(settingsPath);
        fs.mkdirSync(settingsPath); // a directory where the file should be: rename over it fails
        const next: KvaultSettings = { ...store.current, modelPath: "/models/x.gguf" };
        await expect(store.save(next)).rejects.toBeInstanceOf(SettingsWriteError);
        await expect(store.save(next)).rejects.toMatchObject({ code: "settings_write_failed" });
        expect(store.current.modelPath).toBeNull();
        expect(leftovers()).toEqual([]);
        fs.rmdirSync(settingsPath);
        fs.writeFileSync(settingsPath, before);
        await store.save(next); // the queue is not stuck after a failure
        expect(onDisk()).toEqual(fileText(next));
    });

    it("migrates a version 1 file to version 2, keeping every field, a newer Kvault's unknown ones too", async () => {
        fs.writeFileSync(
            settingsPath,
            JSON.stringify({
                version: 1,
                localApi: { enabled: true, port: 9100, apiKey: "kv-own-key-5678" },
                modelPath: null,
                theme: "dark",
                window: { pinned: true }
            })
        );
        const store = await SettingsFile.open(settingsPath, options());
        expect(logged).toEqual([]); // a version 1 file has no engine settings nor keys: not a problem
        expect(onDisk()).toEqual({
            version: 2,
            localApi: { enabled: true, port: 9100, apiKey: "kv-own-key-5678" },
            apiKeys: [],
            modelPath: null,
            engine: store.current.engine,
            theme: "dark",
            backends: [],
            modelPool: { modelIdleSeconds: 300, modelsMemoryMb: null, modelsFolders: [] },
            window: { pinned: true }
        });
        expect(store.current.engine.contextSize).toBe(4096);
    });

    it("applies saves in call order", async () => {
        const store = await SettingsFile.open(settingsPath, options());
        const ports = [9001, 9002, 9003, 9004, 9005];
        await Promise.all(ports.map((port) => store.save({ ...store.current, localApi: { ...store.current.localApi, port } })));
        expect((onDisk() as KvaultSettings).localApi.port).toBe(9005);
        expect(store.current.localApi.port).toBe(9005);
        expect(leftovers()).toEqual([]);
    });
});

describe("writeFileAtomic", () => {
    it("replaces the whole file, never leaving a mix of old and new", async () => {
        fs.writeFileSync(settingsPath, "old ".repeat(10_000));
        await writeFileAtomic(settingsPath, "new");
        expect(fs.readFileSync(settingsPath, "utf8")).toBe("new");
        expect(leftovers()).toEqual([]);
    });

    it("leaves the target untouched and no temporary file when it cannot write", async () => {
        fs.writeFileSync(settingsPath, "old");
        await expect(writeFileAtomic(path.join(directory, "missing", "settings.json"), "new")).rejects.toMatchObject({ code: "ENOENT" });
        expect(fs.readFileSync(settingsPath, "utf8")).toBe("old");
        expect(fs.readdirSync(directory)).toEqual(["settings.json"]);
    });
});
