import path from "node:path";
import { describe, expect, it } from "vitest";
import {
    defaultSettings,
    engineSettingDefaults,
    newApiKey,
    serializeSettings,
    settingsDefaults
} from "../../../../host/settings/KvaultSettings.js";
import { parseSettingsFile } from "../../../../host/settings/parseSettingsFile.js";
import { modelPoolSettingDefaults } from "../../../../contract/modelPoolSettings.js";

const key = (): string => "kv-test-key-0001";
const absoluteModel = process.platform === "win32" ? "C:\\models\\llama.gguf" : "/models/llama.gguf";

describe("parseSettingsFile", () => {
    it("gives the defaults, and a new key, for an empty file", () => {
        expect(parseSettingsFile({}, key)).toEqual({
            settings: {
                version: 2,
                localApi: { enabled: false, port: settingsDefaults.localApiPort, apiKey: "kv-test-key-0001" },
                apiKeys: [],
                modelPath: null,
                engine: engineSettingDefaults,
                theme: "system",
                backends: [],
                modelPool: modelPoolSettingDefaults,
                extra: {}
            },
            problems: ["localApi is missing or not an object; using the defaults."]
        });
        expect(defaultSettings(key)).toEqual(parseSettingsFile({}, key).settings);
    });

    it("keeps every usable field, with no problems", () => {
        const file = {
            version: 2,
            localApi: { enabled: true, port: 11434, apiKey: "my-own.key_1" },
            apiKeys: [{ id: "alice", key: "alice-key-0123456789", createdAt: "2026-12-01T10:00:00.000Z", generation: "0123456789abcdef" }],
            modelPath: absoluteModel,
            engine: {
                contextSize: 8192,
                gpu: "off",
                gpuLayers: 3,
                threads: 6,
                flashAttention: true,
                kvCacheType: "q8_0",
                decodeSequences: 2,
                pageTokens: 128,
                poolPages: 300,
                speculation: "draft-model",
                draftModel: absoluteModel,
                draftMaxTokens: 8,
                draftMinConfidence: 0.75
            },
            theme: "dark",
            backends: [
                { name: "ls", url: "http://127.0.0.1:8081", allowRemote: false },
                { name: "cloud", url: "https://api.example.com/v1", model: "org/m-7b", key: "sk-cloud-1", allowRemote: true }
            ],
            modelPool: { modelIdleSeconds: 60, modelsMemoryMb: 8192, modelsFolders: [path.resolve("/models/more")] }
        };
        expect(parseSettingsFile(file, key)).toEqual({ settings: { ...file, extra: {} }, problems: [] });
    });

    it("reads an older file's number in engine.gpu as the auto backend with that many layers, said nowhere as a problem", () => {
        expect(parseSettingsFile({ localApi: {}, engine: { gpu: 12 } }, key)).toMatchObject({
            settings: { engine: { ...engineSettingDefaults, gpu: "auto", gpuLayers: 12 } },
            problems: []
        });
        expect(parseSettingsFile({ localApi: {}, engine: { gpu: 0 } }, key).settings.engine).toMatchObject({ gpu: "auto", gpuLayers: 0 });
        expect(parseSettingsFile({ localApi: {}, engine: { gpu: "off" } }, key).settings.engine).toMatchObject({
            gpu: "off",
            gpuLayers: "auto"
        });
    });

    it("keeps a backend and a number of layers on it as two fields, and refuses either out of range with a line", () => {
        expect(parseSettingsFile({ localApi: {}, engine: { gpu: "vulkan", gpuLayers: 2 } }, key)).toMatchObject({
            settings: { engine: { ...engineSettingDefaults, gpu: "vulkan", gpuLayers: 2 } },
            problems: []
        });
        expect(parseSettingsFile({ localApi: {}, engine: { gpu: "cuda", gpuLayers: "auto" } }, key).settings.engine).toMatchObject({
            gpu: "cuda",
            gpuLayers: "auto"
        });
        for (const bad of [-1, 2.5, 1025, "12"]) {
            const { settings, problems } = parseSettingsFile({ localApi: {}, engine: { gpu: bad } }, key);
            expect(settings.engine).toMatchObject({ gpu: "auto", gpuLayers: "auto" });
            expect(problems).toEqual([
                `engine.gpu is ${JSON.stringify(bad)}, not "auto", "off", "cuda", "vulkan" or "metal"; using "auto".`
            ]);
            const layers = parseSettingsFile({ localApi: {}, engine: { gpu: "vulkan", gpuLayers: bad } }, key);
            expect(layers.settings.engine).toMatchObject({ gpu: "vulkan", gpuLayers: "auto" });
            expect(layers.problems).toEqual([
                `engine.gpuLayers is ${JSON.stringify(bad)}, not "auto" or a whole number of layers from 0 to 1,024; using "auto".`
            ]);
        }
    });

    it("keeps speculative decoding and its draft model, and turns a draft model without a usable path off, saying why", () => {
        expect(parseSettingsFile({ localApi: {}, engine: { speculation: "draft-model", draftModel: absoluteModel } }, key)).toMatchObject({
            settings: { engine: { speculation: "draft-model", draftModel: absoluteModel } },
            problems: []
        });
        expect(parseSettingsFile({ localApi: {}, engine: { speculation: "input-lookup" } }, key).settings.engine.speculation).toBe(
            "input-lookup"
        );
        const relative = parseSettingsFile({ localApi: {}, engine: { speculation: "draft-model", draftModel: "draft.gguf" } }, key);
        expect(relative.settings.engine).toMatchObject({ speculation: "off", draftModel: null });
        expect(relative.problems).toEqual([
            'engine.draftModel is "draft.gguf", not an absolute path; no draft model.',
            'engine.speculation is "draft-model", but engine.draftModel names no draft model; it stays off.'
        ]);
        const unknown = parseSettingsFile({ localApi: {}, engine: { speculation: "eagle" } }, key);
        expect(unknown.settings.engine.speculation).toBe("off");
        expect(unknown.problems).toEqual(['engine.speculation is "eagle", not one of off, input-lookup, draft-model; it stays off.']);
        const drafting = parseSettingsFile({ localApi: {}, engine: { draftMaxTokens: 65, draftMinConfidence: 1.5 } }, key);
        expect(drafting.settings.engine).toMatchObject({ draftMaxTokens: 16, draftMinConfidence: 0.6 });
        expect(drafting.problems).toEqual([
            "engine.draftMinConfidence is 1.5, not a probability from 0 to 1; using 0.6.",
            "engine.draftMaxTokens is 65; it must be a whole number from 1 to 64. Using 16."
        ]);
    });

    it("returns frozen settings (validated once, then frozen)", () => {
        const { settings } = parseSettingsFile({ localApi: { enabled: true } }, key);
        expect(Object.isFrozen(settings)).toBe(true);
        expect(Object.isFrozen(settings.localApi)).toBe(true);
    });

    it("repairs each bad field on its own, and says which", () => {
        const { settings, problems } = parseSettingsFile(
            {
                localApi: { enabled: "yes", port: 80, apiKey: "short" },
                modelPath: "relative/model.gguf",
                theme: "sepia"
            },
            key
        );
        expect(settings).toEqual({
            version: 2,
            localApi: { enabled: false, port: 8080, apiKey: "kv-test-key-0001" },
            apiKeys: [],
            modelPath: null,
            engine: engineSettingDefaults,
            theme: "system",
            backends: [],
            modelPool: modelPoolSettingDefaults,
            extra: {}
        });
        expect(problems).toHaveLength(5);
        expect(problems.join("\n")).toMatch(/theme is "sepia", not "system", "light" or "dark"/);
        expect(problems.join("\n")).toMatch(/enabled is "yes"/);
        expect(problems.join("\n")).toMatch(/port is 80; it must be a whole number from 1024 to 65535/);
        expect(problems.join("\n")).toMatch(/apiKey/);
        expect(problems.join("\n")).toMatch(/modelPath is "relative\/model.gguf"/);
    });

    it("keeps each usable model pool setting and repairs each other one on its own, with its numbers", () => {
        const { settings, problems } = parseSettingsFile(
            { localApi: {}, modelPool: { modelIdleSeconds: 0, modelsMemoryMb: 2048, modelsFolders: ["relative/models"] } },
            key
        );
        expect(settings.modelPool).toEqual({ modelIdleSeconds: 300, modelsMemoryMb: 2048, modelsFolders: [] });
        expect(problems).toEqual([
            "modelPool.modelIdleSeconds is 0; it must be a whole number from 1 to 604,800 (seconds). Using 300.",
            'modelPool.modelsFolders[0] is "relative/models", not an absolute path of at most 4,096 characters. Using [].'
        ]);
        expect(parseSettingsFile({ localApi: {}, modelPool: { modelsMemoryMb: null } }, key)).toMatchObject({
            settings: { modelPool: { modelsMemoryMb: null } },
            problems: []
        });
        expect(parseSettingsFile({ localApi: {}, modelPool: "fast" }, key).problems).toEqual([
            'modelPool is "fast", not an object; using the defaults.'
        ]);
    });

    it("falls back for each bad engine setting on its own, with a line naming it and the value used", () => {
        const { settings, problems } = parseSettingsFile(
            {
                localApi: {},
                engine: {
                    contextSize: 8,
                    gpu: "opencl",
                    threads: -1,
                    flashAttention: false,
                    kvCacheType: "q4_0",
                    decodeSequences: 2.5,
                    pageTokens: 64,
                    poolPages: "many"
                }
            },
            key
        );
        expect(settings.engine).toEqual({ ...engineSettingDefaults, flashAttention: false, pageTokens: 64 });
        expect(problems).toEqual([
            'engine.gpu is "opencl", not "auto", "off", "cuda", "vulkan" or "metal"; using "auto".',
            "engine.kvCacheType is q4_0, which needs flash attention, and engine.flashAttention is false; using f16.",
            "engine.contextSize is 8; it must be a whole number from 16 to 4,194,304. Using 4096.",
            "engine.threads is -1; it must be null (Kvault's choice) or a whole number from 1 to 1,024. Using Kvault's choice.",
            "engine.decodeSequences is 2.5; it must be a whole number from 1 to 256. Using 4.",
            `engine.poolPages is "many"; it must be null (Kvault's choice) or a whole number from 1 to 4,194,304. Using Kvault's choice.`
        ]);
    });

    it("keeps usable API keys and drops a malformed or repeated one, saying which; an older entry gets a generation", () => {
        const good = { id: "alice", key: "alice-key-0123456789", createdAt: "2026-12-01T10:00:00.000Z", generation: "0123456789abcdef" };
        const older = { id: "older", key: "older-key-0123456789", createdAt: good.createdAt };
        const { settings, problems } = parseSettingsFile(
            {
                localApi: { apiKey: "kv-default-key-1234" },
                apiKeys: [
                    good,
                    { id: "bad:id", key: "bob-key-0123456789", createdAt: good.createdAt },
                    { ...good, id: "again" },
                    { id: "same", key: "kv-default-key-1234", createdAt: good.createdAt },
                    older
                ]
            },
            key
        );
        expect(settings.apiKeys).toEqual([good, { ...older, generation: expect.stringMatching(/^[0-9a-f]{16}$/) }]);
        expect(problems).toEqual([
            expect.stringMatching(/^apiKeys\[1\] is not \{id, key, createdAt\}/),
            'apiKeys[2] ("again") repeats another key\'s id or secret; only the first is in force.',
            'apiKeys[3] ("same") repeats another key\'s id or secret; only the first is in force.'
        ]);
        expect(parseSettingsFile({ localApi: {}, apiKeys: "x" }, key).problems).toEqual([
            'apiKeys is "x", not a list; no extra API keys are in force.'
        ]);
    });

    it("checks each backend with --backend's rules, dropping a bad or repeated one with a line saying why", () => {
        const good = { name: "ls", url: "http://127.0.0.1:8081", allowRemote: false };
        const { settings, problems } = parseSettingsFile(
            {
                localApi: {},
                backends: [
                    good,
                    { name: "far", url: "http://10.0.0.5:8000/v1", allowRemote: false },
                    { name: "bad name", url: "http://127.0.0.1:1", allowRemote: false },
                    { name: "ftp", url: "ftp://127.0.0.1/", allowRemote: false },
                    { name: "creds", url: "http://u:p@127.0.0.1:1", allowRemote: false },
                    { name: "spaced", url: "http://127.0.0.1:1", key: "has a space", allowRemote: false },
                    { name: "long", url: "http://127.0.0.1:1", model: "m".repeat(513), allowRemote: false },
                    { ...good, url: "http://127.0.0.1:9999" },
                    { name: "typed", url: 8080, allowRemote: "yes" },
                    "ls=http://127.0.0.1:8081"
                ]
            },
            key
        );
        expect(settings.backends).toEqual([good]);
        expect(problems).toEqual([
            'backends[1] ("far"): 10.0.0.5 is not a loopback address, so the chats of its workspaces leave this machine; that backend is not in force.',
            "backends[2] (\"bad name\"): the name is 1 to 40 letters, digits, '_' or '-'; that backend is not in force.",
            'backends[3] ("ftp"): ftp: is not http: or https:; that backend is not in force.',
            expect.stringMatching(/^backends\[4\] \("creds"\): a backend URL takes no user, password, query or fragment/),
            'backends[5] ("spaced"): the key is not 1 to 4,096 printable characters without spaces (it has 11 characters); that backend is not in force.',
            'backends[6] ("long"): the model id is empty or over 512 characters; that backend is not in force.',
            'backends[7] repeats the name "ls" of an earlier backend; only the first is in force.',
            expect.stringMatching(/^backends\[8\] is not \{name, url, model\?, key\?, allowRemote\}/),
            expect.stringMatching(/^backends\[9\] is not \{name, url/)
        ]);
        expect(parseSettingsFile({ localApi: {}, backends: { ls: "x" } }, key).problems).toEqual([
            "backends is an object, not a list; no remote backend from the settings is in force."
        ]);
        // The problems never hold a key.
        expect(problems.join("\n")).not.toContain("has a space");
    });

    it("keeps a backend beyond loopback only with allowRemote, and a newer Kvault's fields of an entry", () => {
        const entry = { name: "far", url: "https://10.0.0.5/v1", allowRemote: true, priority: 2 };
        const { settings, problems } = parseSettingsFile({ localApi: {}, backends: [entry] }, key);
        expect(problems).toEqual([]);
        expect(settings.backends).toEqual([{ name: "far", url: "https://10.0.0.5/v1", allowRemote: true, extra: { priority: 2 } }]);
        expect(JSON.parse(serializeSettings(settings)).backends).toEqual([entry]);
        // A version 2 file from before backends reads as none, without a problem.
        expect(parseSettingsFile({ version: 2, localApi: {} }, key)).toMatchObject({ settings: { backends: [] }, problems: [] });
    });

    it("keeps a newer Kvault's version and fields, and says so", () => {
        const { settings, problems } = parseSettingsFile({ version: 3, localApi: {}, sync: { every: 5 } }, key);
        expect(settings.version).toBe(3);
        expect(settings.extra).toEqual({ sync: { every: 5 } });
        expect(problems).toEqual([
            "The settings file is version 3, from a newer Kvault; this one (version 2) uses the fields it knows and keeps the others as they are."
        ]);
    });

    it.each([
        ["a port that is not whole", 8080.5],
        ["a port above 65535", 70_000],
        ["a port as a string", "8080"]
    ])("refuses %s", (_, port) => {
        expect(parseSettingsFile({ localApi: { port } }, key).settings.localApi.port).toBe(settingsDefaults.localApiPort);
    });

    it.each([
        ["null", null],
        ["a list", []],
        ["a string", "settings"]
    ])("survives a file that holds %s", (_, value) => {
        const { settings, problems } = parseSettingsFile(value, key);
        expect(settings).toEqual(defaultSettings(key));
        expect(problems).toEqual(["The settings are not a JSON object; using the defaults."]);
    });

    it("never echoes a huge value into the log", () => {
        const { problems } = parseSettingsFile({ localApi: {}, modelPath: "x".repeat(1_000_000) }, key);
        expect(problems.join("").length).toBeLessThan(300);
    });
});

describe("newApiKey", () => {
    it("makes keys the local API accepts, different each time", () => {
        const first = newApiKey();
        expect(first).toMatch(/^kv-[0-9a-f]{48}$/);
        expect(newApiKey()).not.toBe(first);
        expect(parseSettingsFile({ localApi: { apiKey: first } }, key).settings.localApi.apiKey).toBe(first);
    });
});
