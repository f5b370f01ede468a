// The settings screen's remote backends on a real settings.json: checked with --backend's rules,
// saved, put in the live set at once, their keys never in the view, and the command line's for a
// run not changeable. The real backend behind them is test/e2e/settingsBackends.test.ts.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Backends } from "../../../../host/backends/Backends.js";
import { parseBackendOption } from "../../../../host/backends/parseBackendOption.js";
import { ApiKeys } from "../../../../host/http/ApiKeys.js";
import { SettingsFile } from "../../../../host/settings/SettingsFile.js";
import { SettingsHost } from "../../../../host/settings/SettingsHost.js";

let directory: string;
let logged: string[];
const settingsPath = (): string => path.join(directory, "settings.json");
const onDisk = (): { backends: unknown[] } => JSON.parse(fs.readFileSync(settingsPath(), "utf8")) as { backends: unknown[] };

async function host(backends: Backends, commandLineBackends: string[] = []): Promise<SettingsHost> {
    const file = await SettingsFile.open(settingsPath(), { log: () => undefined, makeApiKey: () => "kv-default-key-1" });
    return new SettingsHost({
        host: "headless",
        file,
        stateDirectory: directory,
        engine: () => Promise.reject(new Error("no engine in this test")),
        running: file.current.engine,
        apiKeys: new ApiKeys(),
        backends,
        commandLineBackends: commandLineBackends.map((text) => parseBackendOption(text, {})),
        localApi: () => ({ enabled: true, port: 1, apiKey: null, url: null, problem: null, editable: false }),
        machine: () => ({ freeRamBytes: 0, freeVramBytes: null }),
        log: (line) => void logged.push(line)
    });
}

beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-backend-settings-"));
    logged = [];
});
afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

describe("the settings' remote backends", () => {
    it("adds one in force at once and in settings.json with its key, which the view only says is set", async () => {
        const backends = new Backends([]);
        const settings = await host(backends);
        const view = await settings.setBackend({ name: "ls", url: " http://127.0.0.1:8081 ", key: "sk-secret-1", allowRemote: false });
        expect(view.backends).toEqual({
            list: [
                { name: "ls", apiBase: "http://127.0.0.1:8081/v1", model: null, hasKey: true, keyEnv: null, remote: false, warning: null }
            ],
            source: "settings",
            numStored: 1
        });
        expect(JSON.stringify(view)).not.toContain("sk-secret-1");
        expect(backends.get("ls").config).toMatchObject({ apiBase: "http://127.0.0.1:8081/v1", key: "sk-secret-1" });
        expect(onDisk().backends).toEqual([{ name: "ls", url: "http://127.0.0.1:8081", key: "sk-secret-1", allowRemote: false }]);
        expect(fs.statSync(settingsPath()).mode & 0o777).toBe(0o600);
        expect(logged).toEqual(['Settings: backend "ls" added: http://127.0.0.1:8081/v1, with a key.']);

        // Edited: the key stays unless another is given (null removes it); the model narrows what it offers.
        const routed = backends.get("ls");
        await settings.setBackend({ name: "ls", url: "http://127.0.0.1:8082/v1", model: "llama3-tiny", allowRemote: false });
        expect(backends.get("ls")).not.toBe(routed);
        expect(backends.get("ls").config).toMatchObject({ apiBase: "http://127.0.0.1:8082/v1", model: "llama3-tiny", key: "sk-secret-1" });
        await settings.setBackend({ name: "ls", url: "http://127.0.0.1:8082/v1", key: null, allowRemote: false });
        expect(backends.get("ls").config.key).toBeUndefined();
        expect(onDisk().backends).toEqual([{ name: "ls", url: "http://127.0.0.1:8082/v1", allowRemote: false }]);

        // A reopened host puts the file's backends in force.
        const reopened = new Backends([]);
        await host(reopened);
        expect(reopened.all().map((backend) => backend.config.apiBase)).toEqual(["http://127.0.0.1:8082/v1"]);
    });

    it("refuses what --backend refuses, saying which part and what to change, and changes nothing", async () => {
        const backends = new Backends([]);
        const settings = await host(backends);
        await expect(settings.setBackend({ name: "far", url: "http://10.0.0.5:8000/v1", allowRemote: false })).rejects.toMatchObject({
            code: "invalid_backend_setting",
            message:
                'The backend "far" was not saved: 10.0.0.5 is not a loopback address, so the chats of its workspaces leave this machine. Tick "Allow beyond this machine" if that is what you want.'
        });
        await expect(settings.setBackend({ name: "x", url: "ftp://127.0.0.1/", allowRemote: false })).rejects.toMatchObject({
            code: "invalid_backend_setting",
            message: expect.stringMatching(/^The backend "x" was not saved: ftp: is not http: or https:\. Give the server's base URL/)
        });
        await expect(
            settings.setBackend({ name: "x", url: "http://127.0.0.1:1", key: "two words", allowRemote: false })
        ).rejects.toMatchObject({
            code: "invalid_backend_setting"
        });
        expect(backends.size).toBe(0);
        expect(onDisk().backends).toEqual([]);

        const view = await settings.setBackend({ name: "far", url: "https://10.0.0.5/v1", allowRemote: true });
        expect(view.backends.list[0]).toMatchObject({
            remote: true,
            warning: expect.stringMatching(/^Warning: backend "far" is at https:\/\/10\.0\.0\.5\/v1, beyond this machine/)
        });
        expect(logged.at(-1)).toBe(view.backends.list[0]!.warning);
    });

    it("removes one from the live set and the file; an unknown name is refused", async () => {
        const backends = new Backends([]);
        const settings = await host(backends);
        await settings.setBackend({ name: "a", url: "http://127.0.0.1:1", allowRemote: false });
        await settings.setBackend({ name: "b", url: "http://127.0.0.1:2", allowRemote: false });
        const view = await settings.removeBackend("a");
        expect(view.backends.list.map((backend) => backend.name)).toEqual(["b"]);
        expect(backends.route("a/m")).toBeUndefined();
        expect(onDisk().backends).toEqual([{ name: "b", url: "http://127.0.0.1:2", allowRemote: false }]);
        await expect(settings.removeBackend("a")).rejects.toMatchObject({
            code: "invalid_backend_setting",
            message: 'There is no backend "a" in the settings (they have "b").'
        });
    });

    it("puts --backend's in force instead of the file's for that run, shown as the command line's and not changeable", async () => {
        const first = await host(new Backends([]));
        await first.setBackend({ name: "saved", url: "http://127.0.0.1:1", allowRemote: false });
        const backends = new Backends([]);
        const settings = await host(backends, ["cli=http://127.0.0.1:2"]);
        expect(backends.all().map((backend) => backend.name)).toEqual(["cli"]);
        expect(settings.view().backends).toEqual({
            list: [
                { name: "cli", apiBase: "http://127.0.0.1:2/v1", model: null, hasKey: false, keyEnv: null, remote: false, warning: null }
            ],
            source: "command line",
            numStored: 1
        });
        expect(logged).toContain("Settings: --backend is given, so settings.json's 1 backend(s) are not in force for this run.");
        const refusal = {
            code: "setting_from_command_line",
            message: expect.stringMatching(
                /^The remote backends are given on the command line \(--backend\) for this run; restart the server without --backend/
            )
        };
        await expect(settings.setBackend({ name: "x", url: "http://127.0.0.1:3", allowRemote: false })).rejects.toMatchObject(refusal);
        await expect(settings.removeBackend("saved")).rejects.toMatchObject(refusal);
        expect(onDisk().backends).toEqual([{ name: "saved", url: "http://127.0.0.1:1", allowRemote: false }]);
    });
});
