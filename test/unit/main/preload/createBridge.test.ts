import { describe, expect, it } from "vitest";
import { channels, rpcChannels } from "../../../../contract/channels.js";
import type { ChatTurnRequest } from "../../../../contract/engineProtocol.js";
import type { RpcTurnEvent } from "../../../../contract/rpc.js";
import { createBridge, type BridgeIpc } from "../../../../main/preload/createBridge.js";

/** An ipcRenderer that records invokes and lets the test emit on channels. */
function fakeIpc(): BridgeIpc & {
    readonly invoked: unknown[][];
    emit(channel: string, ...args: unknown[]): void;
    numListeners(channel: string): number;
} {
    const invoked: unknown[][] = [];
    const listeners = new Map<string, Set<(...args: unknown[]) => void>>();
    const ipc = {
        invoked,
        invoke: async (...args: unknown[]) => {
            invoked.push(args);
            return { ok: true, value: null };
        },
        on(channel: string, listener: (...args: unknown[]) => void) {
            listeners.set(channel, (listeners.get(channel) ?? new Set()).add(listener));
            return ipc;
        },
        removeListener(channel: string, listener: (...args: unknown[]) => void) {
            listeners.get(channel)?.delete(listener);
            return ipc;
        },
        emit(channel: string, ...args: unknown[]) {
            for (const listener of listeners.get(channel) ?? []) {
                listener(...args);
            }
        },
        numListeners: (channel: string) => listeners.get(channel)?.size ?? 0
    };
    return ipc as unknown as ReturnType<typeof fakeIpc>;
}

const request: ChatTurnRequest = {
    requestId: "r1",
    workspace: "alice",
    messages: [{ role: "user", content: "Hi" }],
    sampling: { temperature: 0, maxTokens: 8 }
};

describe("createBridge", () => {
    it("exposes named functions only, nothing of ipcRenderer", () => {
        const bridge = createBridge(fakeIpc());
        expect(Object.keys(bridge).sort()).toEqual([
            "appendMessage",
            "audit",
            "cancel",
            "cancelDownload",
            "chat",
            "clearChat",
            "dropLastAnswer",
            "forgetModel",
            "forgetWorkspace",
            "getAppInfo",
            "getSettings",
            "importWorkspaces",
            "info",
            "inspectModel",
            "listDownloads",
            "listDrills",
            "listModels",
            "loadWorkspaces",
            "measure",
            "onTurnEvent",
            "removeWorkspace",
            "replay",
            "replayableTurns",
            "resumeDownload",
            "runCanary",
            "runDrill",
            "saveWorkspace",
            "selectWorkspace",
            "setLocalApi",
            "snapshot",
            "startDownload",
            "switchModel"
        ]);
        for (const value of Object.values(bridge)) {
            expect(typeof value).toBe("function");
        }
    });

    it("sends each call on its channel with exactly the contract's fields", async () => {
        const ipc = fakeIpc();
        const bridge = createBridge(ipc);
        const smuggled = { ...request, __proto__: { evil: true }, extra: "x" } as ChatTurnRequest;
        await bridge.getAppInfo();
        await bridge.info();
        await bridge.chat(smuggled);
        await bridge.cancel("r1");
        await bridge.measure("alice", request.messages, "draft");
        await bridge.snapshot();
        await bridge.forgetWorkspace("alice");
        await bridge.audit();
        await bridge.replayableTurns();
        await bridge.replay("r1");
        await bridge.listDrills();
        await bridge.runDrill("flipped-byte");
        await (bridge.runDrill as (...args: unknown[]) => Promise<unknown>)("late-write", { guards: "off" });
        await (bridge.audit as (...args: unknown[]) => Promise<unknown>)({ scanFreePages: false });
        await bridge.runCanary({});
        await bridge.runCanary({ fillerTokens: 300, guards: "off" } as never);
        await bridge.inspectModel("/m/a.gguf");
        await (bridge.inspectModel as (...args: unknown[]) => Promise<unknown>)("/m/b.gguf", { gpuLayers: 99 });
        await bridge.switchModel("tiny");
        await bridge.startDownload("hf:o/r:Q4_K_M");
        await (bridge.startDownload as (...args: unknown[]) => Promise<unknown>)("https://h/m.gguf", { dirPath: "/etc" });
        await bridge.listDownloads();
        await bridge.cancelDownload("d1");
        await bridge.resumeDownload("d1");
        await bridge.listModels();
        await bridge.forgetModel("m1", false);
        await bridge.forgetModel("m2", "yes" as never);
        await bridge.getSettings();
        await bridge.setLocalApi({ enabled: true, port: 8081, apiKey: "mine" } as never);
        expect(ipc.invoked).toEqual([
            [channels.getAppInfo],
            [rpcChannels.info, {}],
            [rpcChannels.chat, { requestId: "r1", workspace: "alice", messages: request.messages, sampling: request.sampling }],
            [rpcChannels.cancel, { requestId: "r1" }],
            [rpcChannels.measure, { workspace: "alice", messages: request.messages, draft: "draft" }],
            [rpcChannels.snapshot, {}],
            [rpcChannels.forgetWorkspace, { workspace: "alice" }],
            [rpcChannels.audit, {}],
            [rpcChannels.replayableTurns, {}],
            [rpcChannels.replay, { requestId: "r1" }],
            [rpcChannels.listDrills, {}],
            [rpcChannels.runDrill, { id: "flipped-byte" }],
            [rpcChannels.runDrill, { id: "late-write" }],
            [rpcChannels.audit, {}],
            [rpcChannels.runCanary, {}],
            [rpcChannels.runCanary, { fillerTokens: 300 }],
            [rpcChannels.inspectModel, { path: "/m/a.gguf" }],
            [rpcChannels.inspectModel, { path: "/m/b.gguf" }],
            [rpcChannels.switchModel, { model: "tiny" }],
            [rpcChannels.startDownload, { source: "hf:o/r:Q4_K_M" }],
            [rpcChannels.startDownload, { source: "https://h/m.gguf" }],
            [rpcChannels.listDownloads, {}],
            [rpcChannels.cancelDownload, { id: "d1" }],
            [rpcChannels.resumeDownload, { id: "d1" }],
            [rpcChannels.listModels, {}],
            [rpcChannels.forgetModel, { id: "m1", deleteFile: false }],
            [rpcChannels.forgetModel, { id: "m2", deleteFile: false }],
            [channels.getSettings],
            [channels.setLocalApi, { enabled: true, port: 8081 }]
        ]);
    });

    it("sends the workspace store's calls with exactly the contract's fields", async () => {
        const ipc = fakeIpc();
        const bridge = createBridge(ipc);
        const settings = { systemPrompt: "", temperature: 0.7, maxTokens: 256 };
        const message = { id: "m-1", role: "user", content: "Hi" } as const;
        await bridge.loadWorkspaces();
        await bridge.importWorkspaces("{}");
        await bridge.saveWorkspace({ id: "ui-1", name: "A", colour: 2, settings, messages: [], extra: 1 } as never);
        await bridge.removeWorkspace("ui-1");
        await bridge.selectWorkspace("ui-2");
        await bridge.appendMessage("ui-2", { ...message, smuggled: true } as never);
        await bridge.dropLastAnswer("ui-2", "m-2");
        await bridge.clearChat("ui-2");
        expect(ipc.invoked).toEqual([
            [rpcChannels.loadWorkspaces, {}],
            [rpcChannels.importWorkspaces, { document: "{}" }],
            [rpcChannels.saveWorkspace, { workspace: { id: "ui-1", name: "A", colour: 2, settings } }],
            [rpcChannels.removeWorkspace, { workspace: "ui-1" }],
            [rpcChannels.selectWorkspace, { workspace: "ui-2" }],
            [rpcChannels.appendMessage, { workspace: "ui-2", message: { ...message, finish: undefined, usage: undefined } }],
            [rpcChannels.dropLastAnswer, { workspace: "ui-2", messageId: "m-2" }],
            [rpcChannels.clearChat, { workspace: "ui-2" }]
        ]);
    });

    it("delivers turn events without the IPC event, until unsubscribed", () => {
        const ipc = fakeIpc();
        const bridge = createBridge(ipc);
        const received: unknown[][] = [];
        const unsubscribe = bridge.onTurnEvent((...args) => received.push(args));
        const event: RpcTurnEvent = { event: "text", requestId: "r1", text: "Hi" };
        ipc.emit(channels.turnEvent, { sender: "ipcRenderer itself" }, event);
        expect(received).toEqual([[event]]);
        unsubscribe();
        ipc.emit(channels.turnEvent, {}, event);
        expect(received).toHaveLength(1);
        expect(ipc.numListeners(channels.turnEvent)).toBe(0);
    });

    it("refuses a listener that is not a function", () => {
        expect(() => createBridge(fakeIpc()).onTurnEvent("alert(1)" as never)).toThrow(TypeError);
    });
});

describe("channels", () => {
    it("has one prefixed, distinct channel per RPC method and per host call", () => {
        const all = [...Object.values(channels), ...Object.values(rpcChannels)];
        expect(new Set(all).size).toBe(all.length);
        for (const channel of all) {
            expect(channel).toMatch(/^kvault:/);
        }
    });
});
