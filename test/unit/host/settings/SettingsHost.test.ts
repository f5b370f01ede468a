// SettingsHost's rules on a real settings.json: a command-line value cannot be changed, only the
// settings asked for are saved, a plan that does not fit is refused before any restart, and keys
// are created and revoked in the live set. The engine is a stand-in that records its restarts;
// the real engine's restart is test/e2e/settings.test.ts, real keys test/model/host/settingsApiKeys.test.ts.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineInfo } from "../../../../contract/engineProtocol.js";
import type { ModelFacts } from "../../../../contract/models.js";
import { ApiKeys } from "../../../../host/http/ApiKeys.js";
import { engineSettingDefaults } from "../../../../host/settings/KvaultSettings.js";
import { SettingsFile } from "../../../../host/settings/SettingsFile.js";
import { SettingsHost, type SettingsEngine } from "../../../../host/settings/SettingsHost.js";

const GiB = 1024 ** 3;
const info = {
    modelPath: "/m.gguf",
    backend: "cpu, local build, 2 threads",
    compute: { backend: "cpu", binary: "local build", devices: [], layers: { numOnDevice: 0, numTotal: 3, numPlanned: 0 } },
    mode: { requested: "split", effective: "split" }
} as unknown as EngineInfo;
const facts = {
    fileBytes: 1024,
    kvBytesPerTokenByType: { f16: 512, q8_0: 272, q4_0: 144 },
    memory: { plainKvCache: true },
    trainContextSize: undefined,
    heads: undefined
} as unknown as ModelFacts;

let directory: string;
let restarts: unknown[];
const engine: SettingsEngine = {
    info,
    numTurns: 0,
    inspectModel: async () => facts,
    call: async (method: string) => (method === "snapshot" ? { workspaces: [] } : {}),
    reconfigure: async (changes: unknown) => {
        restarts.push(changes);
        return info;
    }
} as unknown as SettingsEngine;

async function host(
    freeRamBytes = 64 * GiB,
    apiKeys = new ApiKeys(),
    localEngines?: () => Promise<readonly Pick<SettingsEngine, "call">[]>
): Promise<SettingsHost> {
    const file = await SettingsFile.open(path.join(directory, "settings.json"), {
        log: () => undefined,
        makeApiKey: () => "kv-default-key-1"
    });
    return new SettingsHost({
        host: "headless",
        file,
        stateDirectory: directory,
        engine: async () => engine,
        running: { ...file.current.engine, decodeSequences: 1 },
        fromCommandLine: { decodeSequences: "--decode-sequences" },
        apiKeys,
        commandLineKeyIds: [],
        localApi: () => ({ enabled: true, port: 1, apiKey: null, url: null, problem: null, editable: false }),
        machine: () => ({ freeRamBytes, freeVramBytes: null }),
        makeApiKey: () => "kv-created-key-0001",
        localEngines,
        log: () => undefined
    });
}

const onDisk = (): { engine: Record<string, unknown>; apiKeys: unknown[] } =>
    JSON.parse(fs.readFileSync(path.join(directory, "settings.json"), "utf8")) as { engine: Record<string, unknown>; apiKeys: unknown[] };

beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-settings-host-"));
    restarts = [];
});
afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

describe("SettingsHost", () => {
    it("applies a change with a restart and saves only the settings asked for, never the command line's", async () => {
        const settings = await host();
        const applied = await settings.applyEngineSettings({ contextSize: 1024 });
        expect(applied.plan.changed).toEqual(["contextSize"]);
        expect(restarts).toEqual([expect.objectContaining({ window: 1024, numDecodeSequences: 1 })]);
        expect(onDisk().engine).toEqual({ ...engineSettingDefaults, contextSize: 1024 }); // decodeSequences stays the file's 4
        expect(applied.view.running).toMatchObject({ contextSize: 1024, decodeSequences: 1 });
        await expect(settings.planEngineSettings({ decodeSequences: 2 })).rejects.toMatchObject({
            code: "setting_from_command_line",
            message:
                "decodeSequences is given on the command line for this run (--decode-sequences); restart the server without --decode-sequences to change it here."
        });
    });

    it("refuses a plan that does not fit before restarting anything", async () => {
        const settings = await host(1024);
        await expect(settings.applyEngineSettings({ contextSize: 4_000_000 })).rejects.toMatchObject({
            code: "engine_settings_refused",
            message: expect.stringMatching(/^These engine settings were not applied\. These settings need [\d.]+ GiB of RAM/)
        });
        expect(restarts).toEqual([]);
        expect(onDisk().engine).toEqual(engineSettingDefaults);
    });

    it("plans no byte on a GPU while the engine runs on a software Vulkan device, and a named backend's against the memory it measured", async () => {
        const llvmpipe = "llvmpipe (LLVM 15.0.6, 256 bits)";
        const mutable = engine as unknown as { info: EngineInfo };
        mutable.info = {
            ...info,
            backend: `vulkan, prebuilt, ${llvmpipe} (cpu device), 3 of 3 layers on the device, 1,024 MiB of 2,048 MiB device memory`,
            compute: {
                backend: "vulkan",
                binary: "prebuilt",
                devices: [{ name: llvmpipe, type: "cpu" }],
                layers: { numOnDevice: 3, numTotal: 3, numPlanned: 3 },
                deviceMemory: { usedBytes: 1 * GiB, totalBytes: 2 * GiB }
            }
        };
        try {
            const settings = await host();
            // gpu auto would leave llvmpipe for the CPU: the decode KV, the weights, everything in RAM
            const auto = await settings.planEngineSettings({ contextSize: 1024 });
            expect(auto.vramNeededBytes).toBe(0);
            expect(auto.memory.filter((line) => line.where === "vram")).toEqual([]);
            // Vulkan named: the model on its device, against the 1 GiB free the engine measured there
            const named = await settings.planEngineSettings({ gpu: "vulkan" });
            expect(named.memory.find((line) => line.what === "weights")?.where).toBe("vram");
            expect(named.vramAvailableBytes).toBe(1 * GiB);
        } finally {
            mutable.info = info;
        }
    });

    it("creates a key in the live set and the file, refuses an id in use, and revokes it from both", async () => {
        const keys = new ApiKeys();
        const settings = await host(64 * GiB, keys);
        const created = await settings.createApiKey("dana");
        expect(created).toMatchObject({ id: "dana", key: "kv-created-key-0001" });
        expect(keys.identify("kv-created-key-0001")).toBe("dana");
        expect(onDisk().apiKeys).toEqual([
            { id: "dana", key: "kv-created-key-0001", createdAt: expect.any(String), generation: expect.stringMatching(/^[0-9a-f]{16}$/) }
        ]);
        await expect(settings.createApiKey("dana")).rejects.toMatchObject({ code: "invalid_api_key_entry" });
        await expect(settings.createApiKey("a:b")).rejects.toMatchObject({ code: "invalid_api_key_entry" });
        expect((await settings.revokeApiKey("dana")).apiKeys).toEqual([]);
        expect(keys.identify("kv-created-key-0001")).toBeUndefined();
        expect(onDisk().apiKeys).toEqual([]);
        await expect(settings.revokeApiKey("dana")).rejects.toMatchObject({ code: "api_key_not_revocable" });
        // A key kept in the file is in force at the next start.
        await settings.createApiKey("erin");
        const reopened = new ApiKeys();
        await host(64 * GiB, reopened);
        expect(reopened.identify("kv-created-key-0001")).toBe("erin");
    });

    it("forgets a revoked key's workspaces on every loaded local model's engine too, not only on the host's own", async () => {
        const held = new Set<string>();
        const forgotten: string[] = [];
        const localModel = {
            call: async (method: string, params: { workspace?: string }) => {
                if (method === "snapshot") {
                    return { workspaces: [...held].map((workspace) => ({ workspace })) };
                }
                forgotten.push(params.workspace!);
                held.delete(params.workspace!);
                return {};
            }
        } as unknown as Pick<SettingsEngine, "call">;
        const settings = await host(64 * GiB, new ApiKeys(), async () => [localModel]);
        await settings.createApiKey("dana");
        const { generation } = (onDisk().apiKeys as { generation: string }[])[0]!;
        // the key's request named a local model: its workspace lives on that model's engine alone
        held.add(`api@dana~${generation}:notes`).add("api:other");
        await settings.revokeApiKey("dana");
        // before: only the host's own engine was asked, and the local model kept the key's KV until it unloaded
        expect(forgotten).toEqual([`api@dana~${generation}:notes`]);
        expect([...held]).toEqual(["api:other"]);
    });

    it("answers settings_unavailable for the local API switch headless", async () => {
        await expect((await host()).setLocalApi({ enabled: false, port: 8080 })).rejects.toMatchObject({ code: "settings_unavailable" });
    });
});
