import { describe, expect, it } from "vitest";
import { defaultWorkspaceSettings } from "../../../contract/workspaces.js";
import { fieldLimits, rpcLimits, turnLimits } from "../../../contract/limits.js";
import { rpcMethods } from "../../../contract/rpc.js";
import { parseRpcCall, type RpcCall } from "../../../contract/rpc/parseRpcCall.js";
import { callTimeouts, engineMethods, rpcSpec } from "../../../contract/rpc/rpcSpec.js";

/** The call as the spec rebuilt it; fails the test when it was refused. */
function accepted(method: unknown, params: unknown): RpcCall {
    const parsed = parseRpcCall(method, params);
    if (!parsed.ok) {
        throw new Error(`refused: ${parsed.message}`);
    }
    return parsed.call;
}

const chat = {
    requestId: "r1",
    workspace: "alice",
    messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" }
    ],
    sampling: { temperature: 0, maxTokens: 8 }
};
const measure = {
    workspace: "alice",
    messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello" }
    ],
    draft: "next"
};

/** Asserts a refusal with a bounded message; returns the message (the dispatcher answers it as invalid_request). */
function refused(method: unknown, params: unknown): string {
    const parsed = parseRpcCall(method, params);
    expect(parsed.ok, JSON.stringify(parsed).slice(0, 300)).toBe(false);
    const message = parsed.ok ? "" : parsed.message;
    // Bounded apart from the list of methods an unknown one is answered with, which grows with the contract.
    expect(message.replace(rpcMethods.join(", "), "").length).toBeLessThan(400);
    return message;
}

describe("the RPC spec accepts every well-formed call", () => {
    it.each([
        ["info", {}],
        ["snapshot", {}],
        ["cancel", { requestId: "r1" }],
        ["forgetWorkspace", { workspace: "alice" }],
        ["measure", measure],
        ["measure with no history and no draft", { workspace: "alice", messages: [], draft: "" }],
        ["audit", {}],
        ["replayableTurns", {}],
        ["replay", { requestId: "r1" }],
        ["listDrills", {}],
        ["runDrill", { id: "flipped-byte" }],
        ["inspectModel", { path: "/home/me/models/llama.gguf" }],
        ["switchModel", { model: "tiny" }],
        ["switchModel to a path", { model: "C:\\models\\qwen.gguf" }],
        ["startDownload", { source: "https://huggingface.co/o/r/resolve/main/m.gguf" }],
        ["startDownload of an hf: reference", { source: "hf:owner/repo:Q4_K_M" }],
        ["listDownloads", {}],
        ["cancelDownload", { id: "0b7c" }],
        ["resumeDownload", { id: "0b7c" }],
        ["listModels", {}],
        ["forgetModel", { id: "m1" }],
        ["forgetModel deleting the file", { id: "m1", deleteFile: true }],
        ["getSettings", {}],
        ["setLocalApi", { enabled: true, port: 8081 }],
        ["chooseModelFile", {}],
        ["planEngineSettings", { contextSize: 8192, kvCacheType: "q8_0", threads: null, poolPages: 300 }],
        ["applyEngineSettings", { gpu: "off", flashAttention: true, decodeSequences: 2, pageTokens: 64 }],
        ["planEngineSettings", { gpu: "vulkan", gpuLayers: 2 }],
        ["applyEngineSettings", { gpu: "cuda", gpuLayers: "auto" }],
        ["createApiKey", { id: "alice_2" }],
        ["revokeApiKey", { id: "alice_2" }],
        ["importWorkspaces", { importId: "import-1", part: 0, numParts: 2, text: "{" }]
    ])("%s, unchanged", (method, params) => {
        expect(accepted(method.split(" ")[0], params)).toEqual({ method: method.split(" ")[0], params });
    });

    it("chat, with the sampling fields the engine's validator fills in", () => {
        expect(accepted("chat", chat)).toEqual({
            method: "chat",
            params: {
                ...chat,
                sampling: { temperature: 0, maxTokens: 8, topP: undefined, topK: undefined, seed: undefined, stop: undefined }
            }
        });
    });

    it("rebuilds the params: unknown nested fields are not forwarded", () => {
        const call = accepted("chat", {
            ...chat,
            messages: [{ role: "user", content: "Hi", name: "eve" }],
            sampling: { ...chat.sampling, mirostat: "x" }
        });
        expect(call.method).toBe("chat");
        const params = call.params as typeof chat;
        expect(params.messages).toEqual([{ role: "user", content: "Hi" }]);
        expect("mirostat" in params.sampling).toBe(false);
    });

    it("covers every method of the contract", () => {
        const good: Record<string, unknown> = {
            info: {},
            snapshot: {},
            memoryEvents: { afterSeq: 0 },
            exportMemoryRecord: {},
            cancel: { requestId: "r" },
            activeTurns: {},
            attachTurn: { requestId: "r" },
            forgetWorkspace: { workspace: "w" },
            measure,
            chat,
            audit: {},
            replayableTurns: {},
            replay: { requestId: "r" },
            listDrills: {},
            runDrill: { id: "late-write" },
            inspectModel: { path: "/m.gguf" },
            switchModel: { model: "tiny" },
            startDownload: { source: "hf:o/r" },
            listDownloads: {},
            cancelDownload: { id: "d" },
            runCanary: { fillerTokens: 512 },
            ping: {},
            resumeDownload: { id: "d" },
            listModels: {},
            forgetModel: { id: "m", deleteFile: true },
            loadWorkspaces: {},
            importWorkspaces: { importId: "i", part: 0, numParts: 1, text: "{}" },
            saveWorkspace: {
                workspace: { id: "ui-1", name: "A", colour: 0, settings: { systemPrompt: "", temperature: 0.7, maxTokens: 256 } }
            },
            removeWorkspace: { workspace: "ui-1" },
            selectWorkspace: { workspace: "ui-1" },
            clearChat: { workspace: "ui-1" },
            appendMessage: { workspace: "ui-1", message: { id: "m-1", role: "user", content: "Hi" } },
            dropLastAnswer: { workspace: "ui-1", messageId: "m-2" },
            selectBranch: { workspace: "ui-1", messageId: "m-2" },
            deleteMessage: { workspace: "ui-1", messageId: "m-2" },
            duplicateWorkspace: { workspace: "ui-1", id: "ui-2", name: "A (copy)" },
            importChat: { importId: "i", id: "ui-2", part: 0, numParts: 1, text: "{}" },
            getSettings: {},
            setLocalApi: { enabled: false, port: 1024 },
            chooseModelFile: {},
            planEngineSettings: {},
            applyEngineSettings: { contextSize: 1024 },
            createApiKey: { id: "bob" },
            revokeApiKey: { id: "bob" },
            embed: { inputs: ["Hi", [1, 2, 3]] },
            resourceUse: {},
            modelCatalogue: { contextSize: 4096 },
            searchModels: { query: "qwen3" },
            modelRepoFiles: { repo: "unsloth/Qwen3-0.6B-GGUF" },
            listBackends: {},
            listLocalModels: {},
            getModelPoolSettings: {},
            setModelPoolSettings: { modelIdleSeconds: 60, modelsMemoryMb: null, modelsFolders: ["/models"] },
            measureRemote: { workspace: "ui-1", messages: [], draft: "Hi" },
            planLeakProbe: { target: "kvault" },
            runLeakProbe: { target: "gpu/m" },
            tokenize: { content: "Hi", addSpecial: true, withPieces: false },
            tokenizeChat: { messages: [{ role: "user", content: "Hi" }] },
            detokenize: { tokens: [1, 2, 3] },
            requestLog: { limit: 50 },
            setBackend: { name: "ls", url: "http://127.0.0.1:8081", model: null, key: "sk-1", allowRemote: false },
            removeBackend: { name: "ls" },
            listMcpServers: {},
            answerToolCall: { requestId: "r1", callId: "c1", permission: "once" },
            listPresets: {},
            savePreset: { preset: { id: "p1", name: "Terse", settings: defaultWorkspaceSettings } },
            deletePreset: { id: "p1" },
            importPresets: { fileName: "presets.json", text: "[]" },
            extractAttachment: { fileName: "notes.txt", dataBase64: "aGk=" },
            retrievalStatus: { workspace: "ui-1" },
            setRetrieval: { workspace: "ui-1", enabled: true },
            indexAttachment: { workspace: "ui-1", fileName: "notes.txt", text: "hi" },
            retrieveChunks: { workspace: "ui-1", query: "hi", maxChunks: 1 }
        };
        for (const method of rpcMethods) {
            expect(accepted(method, good[method]).method).toBe(method);
        }
    });
});

describe("the RPC spec refuses, naming the field", () => {
    it.each([
        ["an unknown method", "deleteEverything"],
        ["a method inherited from Object", "constructor"],
        ["a method that is not a string", 42],
        ["no method", undefined]
    ])("%s", (_, method) => {
        expect(refused(method, {})).toMatch(/Unknown RPC method/);
    });

    it("never echoes a huge method name", () => {
        expect(refused("x".repeat(100_000), {})).toMatch(/a string of 100,000 characters/);
    });

    it.each([
        ["null", null],
        ["a list", []],
        ["a string", "{}"],
        ["a number", 1]
    ])("params that are %s", (_, params) => {
        for (const method of rpcMethods) {
            expect(refused(method, params)).toMatch(/params must be an object/);
        }
    });

    it.each([
        ["info", { extra: 1 }],
        ["snapshot", { callId: "c" }],
        ["cancel", { requestId: "r", workspace: "w" }],
        ["forgetWorkspace", { workspace: "w", all: true }],
        ["measure", { ...measure, sampling: {} }],
        ["chat", { ...chat, callback: "x" }],
        ["audit", { scanFreePages: false }],
        ["replayableTurns", { workspace: "w" }],
        ["replay", { requestId: "r", workspace: "w" }],
        ["listDrills", { all: true }],
        ["runDrill", { id: "flipped-byte", guards: "off" }],
        ["inspectModel", { path: "/m.gguf", gpuLayers: 99 }],
        ["switchModel", { model: "tiny", path: "/m.gguf" }],
        ["startDownload", { source: "hf:o/r", dirPath: "/etc" }],
        ["listDownloads", { all: true }],
        ["cancelDownload", { id: "d", deleteFile: false }],
        ["forgetModel", { id: "m", path: "/m.gguf" }],
        ["runCanary", { fillerTokens: 64, guards: "off" }],
        ["setLocalApi", { enabled: true, port: 8081, apiKey: "mine" }],
        ["applyEngineSettings", { contextSize: 1024, window: 1024 }],
        ["setBackend", { name: "ls", url: "http://127.0.0.1:1", allowRemote: false, keyEnv: "KEY" }]
    ])("%s with a field the contract does not name", (method, params) => {
        expect(refused(method, params)).toMatch(/takes no field/);
    });

    it.each([
        ["cancel without a requestId", "cancel", {}, /requestId must be a string/],
        ["cancel with a number", "cancel", { requestId: 7 }, /requestId must be a string; got 7/],
        ["cancel with an empty id", "cancel", { requestId: "" }, /requestId is empty/],
        ["attachTurn without a requestId", "attachTurn", {}, /requestId must be a string/],
        ["a chat whose answerId names no message", "chat", { ...chat, answerId: "../etc" }, /answerId .*is not a workspace or message id/],
        [
            "a chat whose answerParent names no message",
            "chat",
            { ...chat, answerId: "m-1", answerParent: "../etc" },
            /answerParent .*is not a workspace or message id/
        ],
        ["a chat with an answerParent but no answerId", "chat", { ...chat, answerParent: "m-1" }, /give answerId too/],
        ["forgetWorkspace with an object", "forgetWorkspace", { workspace: {} }, /workspace must be a string; got an object/],
        ["forgetWorkspace with an empty name", "forgetWorkspace", { workspace: "" }, /workspace is empty/],
        ["measure with messages as a string", "measure", { ...measure, messages: "hi" }, /messages must be a list/],
        ["measure with a bad role", "measure", { ...measure, messages: [{ role: "tool", content: "x" }] }, /messages\[0\]\.role/],
        [
            "measure with content as a number",
            "measure",
            { ...measure, messages: [{ role: "user", content: 1 }] },
            /messages\[0\]\.content must be a string/
        ],
        ["measure with a missing draft", "measure", { workspace: "w", messages: [] }, /draft must be a string/],
        ["chat without sampling", "chat", { ...chat, sampling: undefined }, /sampling must be an object/],
        ["chat with a temperature as a string", "chat", { ...chat, sampling: { temperature: "0", maxTokens: 8 } }, /sampling\.temperature/],
        ["chat with no messages", "chat", { ...chat, messages: [] }, /messages must be a list of 1/],
        [
            "chat ending with the assistant",
            "chat",
            { ...chat, messages: [{ role: "assistant", content: "x" }] },
            /last message must be the user's/
        ],
        ["chat with an empty requestId", "chat", { ...chat, requestId: "" }, /requestId is empty/],
        ["replay without a requestId", "replay", {}, /requestId must be a string; got undefined/],
        ["replay with a list", "replay", { requestId: ["r1"] }, /requestId must be a string; got a list of 1/],
        ["replay with an empty id", "replay", { requestId: "" }, /requestId is empty/],
        ["runDrill without an id", "runDrill", {}, /id must be a string; got undefined/],
        ["runDrill with a number", "runDrill", { id: 2 }, /id must be a string; got 2/],
        ["runDrill with an empty id", "runDrill", { id: "" }, /^id is empty; name one of listDrills' drills\.$/],
        ["inspectModel without a path", "inspectModel", {}, /path must be a string; got undefined/],
        [
            "inspectModel with a blank path",
            "inspectModel",
            { path: "  " },
            /^path is empty; give the full path of a \.gguf file, or "tiny" for the built-in demo model\.$/
        ],
        ["switchModel with a number", "switchModel", { model: 3 }, /model must be a string; got 3/],
        ["switchModel with an empty model", "switchModel", { model: "" }, /^model is empty/],
        ["startDownload without a source", "startDownload", {}, /source must be a string; got undefined/],
        ["startDownload with a blank source", "startDownload", { source: " " }, /^source is empty; give a model URL/],
        ["cancelDownload with a number", "cancelDownload", { id: 4 }, /id must be a string; got 4/],
        ["cancelDownload with an empty id", "cancelDownload", { id: "" }, /^id is empty; name one of listDownloads' downloads\.$/],
        [
            "setLocalApi with a port below 1024",
            "setLocalApi",
            { enabled: true, port: 80 },
            /^port is 80; choose a whole number from 1024 to 65535\.$/
        ],
        [
            "setLocalApi with enabled as a string",
            "setLocalApi",
            { enabled: "yes", port: 8081 },
            /^enabled must be true or false; got "yes"\.$/
        ],
        [
            "planEngineSettings with a context size below 16",
            "planEngineSettings",
            { contextSize: 8 },
            /^contextSize is 8; contextSize must be a whole number from 16 to 4,194,304\.$/
        ],
        [
            "applyEngineSettings with an unknown KV type",
            "applyEngineSettings",
            { kvCacheType: "q2_k" },
            /^kvCacheType must be "f16", "q8_0" or "q4_0"; got "q2_k"\.$/
        ],
        [
            "planEngineSettings with a number of layers as the backend",
            "planEngineSettings",
            { gpu: 12 },
            /^gpu is 12; gpu must be "auto", "off", "cuda", "vulkan" or "metal"\.$/
        ],
        [
            "applyEngineSettings with more GPU layers than the limit",
            "applyEngineSettings",
            { gpu: "vulkan", gpuLayers: 1025 },
            /^gpuLayers is 1025; gpuLayers must be "auto" or a whole number of layers from 0 to 1,024\.$/
        ],
        [
            "setBackend with a space in the name",
            "setBackend",
            { name: "my gpu", url: "http://127.0.0.1:1", allowRemote: false },
            /^name is "my gpu"; a backend's name is 1 to 40 letters, digits, '_' or '-'\.$/
        ],
        [
            "setBackend without allowRemote",
            "setBackend",
            { name: "ls", url: "http://127.0.0.1:1" },
            /^allowRemote must be true or false; got undefined\.$/
        ],
        [
            "setBackend with a blank URL",
            "setBackend",
            { name: "ls", url: " ", allowRemote: false },
            /^url is empty; give the server's base URL/
        ],
        ["removeBackend without a name", "removeBackend", {}, /^name must be a string; got undefined\.$/],
        [
            "createApiKey with a ':' in the id",
            "createApiKey",
            { id: "a:b" },
            /^id is "a:b"; an API key's id is 1 to 40 letters, digits, '_' or '-'\.$/
        ]
    ])("%s", (_, method, params, message) => {
        expect(refused(method, params)).toMatch(message);
    });

    it("a sparse messages list (structured clone keeps holes)", () => {
        const messages = [{ role: "user", content: "a" }, , { role: "user", content: "b" }]; // eslint-disable-line no-sparse-arrays
        expect(refused("measure", { ...measure, messages })).toMatch(/messages\[1\] must be an object; got undefined/);
        expect(refused("chat", { ...chat, messages })).toMatch(/messages\[1\] must be an object/);
    });

    it.each([
        ["an id", "cancel", { requestId: "r".repeat(fieldLimits.maxIdChars + 1) }, /requestId has 257 characters; the limit is 256/],
        ["a replay's requestId", "replay", { requestId: "r".repeat(100_000) }, /requestId has 100,000 characters; the limit is 256/],
        ["a drill's id", "runDrill", { id: "d".repeat(fieldLimits.maxIdChars + 1) }, /id has 257 characters; the limit is 256/],
        ["a model path", "inspectModel", { path: "/".repeat(4097) }, /path has 4,097 characters; the limit is 4,096/],
        ["a model to switch to", "switchModel", { model: "m".repeat(100_000) }, /model has 100,000 characters; the limit is 4,096/],
        ["a download source", "startDownload", { source: "h".repeat(4097) }, /source has 4,097 characters; the limit is 4,096/],
        [
            "a workspace name",
            "forgetWorkspace",
            { workspace: "w".repeat(turnLimits.maxWorkspaceChars + 1) },
            /workspace has 257 characters/
        ],
        [
            "a message",
            "measure",
            { ...measure, messages: [{ role: "user", content: "x".repeat(turnLimits.maxMessageChars + 1) }] },
            /messages\[0\]\.content has 4,000,001 characters/
        ],
        ["a draft", "measure", { ...measure, draft: "x".repeat(turnLimits.maxMessageChars + 1) }, /draft has 4,000,001 characters/]
    ])("a huge string: %s", (_, method, params, message) => {
        expect(refused(method, params)).toMatch(message);
    });

    it("too many messages", () => {
        const messages = Array.from({ length: turnLimits.maxMessages + 1 }, () => ({ role: "user", content: "x" }));
        expect(refused("measure", { ...measure, messages })).toMatch(/at most 10,000 messages; got a list of 10,001/);
    });

    it("a conversation over the total limit in UTF-8 bytes, though each message is within its own", () => {
        // 3,000,000 CJK characters are 9,000,000 bytes: two such messages and a little more fit; three do not.
        const content = "漢".repeat(3_000_000);
        const rest = rpcLimits.maxConversationBytes - 18_000_000 - 1;
        const texts = [content, content, "x".repeat(4_000_000), "x".repeat(rest - 4_000_000)];
        const messages = texts.map((text) => ({ role: "user", content: text }));
        expect(accepted("chat", { ...chat, messages }).method).toBe("chat"); // one byte below the limit
        expect(refused("chat", { ...chat, messages: [...messages, { role: "user", content: "xy" }] })).toBe(
            "The conversation has 25,165,825 bytes of text (UTF-8); the limit is 25,165,824 bytes. Start a new chat."
        );
        expect(refused("measure", { ...measure, messages, draft: "xy" })).toMatch(/The conversation has 25,165,825 bytes of text/);
    });
});

describe("the RPC spec's table", () => {
    it("gives every engine call its deadline: 30 s for the quick ones, 120 s for replay and runDrill, 10 min for the canary", () => {
        expect(engineMethods).toEqual([
            "measure",
            "snapshot",
            "memoryEvents",
            "forgetWorkspace",
            "audit",
            "replayableTurns",
            "replay",
            "listDrills",
            "runDrill",
            "runCanary",
            "embed",
            "ping",
            "resourceUse",
            "tokenize",
            "tokenizeChat",
            "detokenize"
        ]);
        expect(Object.fromEntries(engineMethods.map((method) => [method, rpcSpec[method].timeoutMs]))).toEqual({
            measure: 30_000,
            snapshot: 30_000,
            memoryEvents: 30_000,
            forgetWorkspace: 30_000,
            audit: 30_000,
            replayableTurns: 30_000,
            listDrills: 30_000,
            replay: 120_000,
            runDrill: 120_000,
            runCanary: 600_000,
            embed: 120_000,
            ping: 30_000,
            resourceUse: 30_000,
            tokenize: 30_000,
            tokenizeChat: 30_000,
            detokenize: 30_000
        });
        expect(callTimeouts).toEqual({ quickMs: 30_000, longMs: 120_000, canaryMs: 600_000 });
        for (const method of rpcMethods.filter((name) => rpcSpec[name].serve === "host")) {
            expect(rpcSpec[method].timeoutMs, `${method} is the host's: bounded by its own code`).toBeUndefined();
        }
    });

    it("keeps the methods' own prototype names out", () => {
        for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
            expect(parseRpcCall(name, {}).ok).toBe(false);
        }
    });
});

describe("the RPC spec: a loaded model for the page map and the isolation calls, and the local models' settings", () => {
    it("takes an optional model on snapshot, audit, runDrill and runCanary, and checks each setting's range with its numbers", () => {
        expect(accepted("snapshot", { model: "tiny-q8" })).toEqual({ method: "snapshot", params: { model: "tiny-q8" } });
        expect(accepted("audit", {})).toEqual({ method: "audit", params: {} });
        expect(accepted("runDrill", { id: "flipped-byte", model: "m" }).params).toEqual({ id: "flipped-byte", model: "m" });
        expect(accepted("runCanary", { model: "m" }).params).toEqual({ model: "m" });
        expect(refused("snapshot", { model: "" })).toMatch(/model is empty/);
        expect(refused("setModelPoolSettings", { modelIdleSeconds: 0 })).toMatch(
            /modelIdleSeconds is 0; choose a whole number of seconds from 1 to 604,800/
        );
        expect(refused("setModelPoolSettings", { modelsMemoryMb: -5 })).toMatch(/or null for the machine's RAM/);
        expect(refused("setModelPoolSettings", { modelsFolders: "/models" })).toMatch(/modelsFolders must be a list of at most 32 folders/);
    });
});

describe("the RPC spec: runCanary", () => {
    it("takes nothing, or a whole number of filler tokens (the canary checks it against the window)", () => {
        expect(accepted("runCanary", {})).toEqual({ method: "runCanary", params: {} });
        expect(accepted("runCanary", { fillerTokens: 300 })).toEqual({ method: "runCanary", params: { fillerTokens: 300 } });
        for (const fillerTokens of [0, -1, 2.5, "300", null, Number.POSITIVE_INFINITY]) {
            expect(refused("runCanary", { fillerTokens })).toMatch(/fillerTokens must be a whole number of at least 1/);
        }
    });
});
