import { describe, expect, it, vi } from "vitest";
import { APP_COMMAND_EVENT, type AppCommand } from "../../../../contract/appCommands.js";
import { ipcChannels } from "../../../../contract/channels.js";
import type { ChatTurnRequest } from "../../../../contract/engineProtocol.js";
import { rpcLimits } from "../../../../contract/limits.js";
import type { TurnEvent } from "../../../../contract/turnEvents.js";
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
    it("exposes four named functions only, nothing of ipcRenderer", () => {
        const bridge = createBridge(fakeIpc());
        expect(Object.keys(bridge).sort()).toEqual(["call", "getAppInfo", "onAppCommand", "onTurnEvent"]);
        for (const value of Object.values(bridge)) {
            expect(typeof value).toBe("function");
        }
    });

    it("sends every RPC call on the one channel, as the method's name and its params (main checks them against the spec)", async () => {
        const ipc = fakeIpc();
        const bridge = createBridge(ipc);
        await bridge.getAppInfo();
        await bridge.call("info", {});
        await bridge.call("chat", request);
        await bridge.call("getSettings", {});
        await bridge.call("setLocalApi", { enabled: true, port: 8081 });
        expect(ipc.invoked).toEqual([
            [ipcChannels.getAppInfo],
            [ipcChannels.call, "info", {}],
            [ipcChannels.call, "chat", request],
            [ipcChannels.call, "getSettings", {}],
            [ipcChannels.call, "setLocalApi", { enabled: true, port: 8081 }]
        ]);
    });

    it("refuses a method that is not a string, and params it cannot send, without invoking anything", async () => {
        const ipc = fakeIpc();
        const bridge = createBridge(ipc);
        await expect(bridge.call(7 as never, {})).rejects.toThrow(TypeError);
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        expect(await bridge.call("saveWorkspace", cyclic)).toMatchObject({
            ok: false,
            error: { code: "invalid_request", message: expect.stringMatching(/^saveWorkspace's params cannot be sent: /) }
        });
        expect(ipc.invoked).toEqual([]);
    });

    it("refuses a call over the RPC's message limit with rpc_message_too_large and the numbers, as the WebSocket does", async () => {
        const ipc = fakeIpc();
        const bridge = createBridge(ipc);
        const content = "x".repeat(rpcLimits.maxMessageBytes);
        const answer = await bridge.call("appendMessage", { workspace: "ui-a", message: { id: "m-1", role: "user", content } });
        const numBytes = JSON.stringify({ workspace: "ui-a", message: { id: "m-1", role: "user", content } }).length;
        expect(answer).toEqual({
            ok: false,
            error: {
                code: "rpc_message_too_large",
                message: `This RPC message is ${numBytes.toLocaleString("en-US")} bytes (UTF-8); Kvault carries at most ${rpcLimits.maxMessageBytes.toLocaleString("en-US")} bytes in one, so it was not sent on. Shorten the chat (start a new one) or the text you are sending.`
            }
        });
        expect(ipc.invoked).toEqual([]);
    });

    it("delivers turn events without the IPC event, until unsubscribed", () => {
        const ipc = fakeIpc();
        const bridge = createBridge(ipc);
        const received: unknown[][] = [];
        const unsubscribe = bridge.onTurnEvent((...args) => void received.push(args));
        const event: TurnEvent = { type: "text", requestId: "r1", text: "Hi" };
        ipc.emit(ipcChannels.turnEvent, { sender: "ipcRenderer itself" }, event);
        expect(received).toEqual([[event]]);
        unsubscribe();
        ipc.emit(ipcChannels.turnEvent, {}, event);
        expect(received).toHaveLength(1);
        expect(ipc.numListeners(ipcChannels.turnEvent)).toBe(0);
    });

    it("refuses a listener that is not a function", () => {
        expect(() => createBridge(fakeIpc()).onTurnEvent("alert(1)" as never)).toThrow(TypeError);
        expect(() => createBridge(fakeIpc()).onAppCommand("alert(1)" as never)).toThrow(TypeError);
    });

    it("forwards each menu command main sends, without the IPC event, until unsubscribed", () => {
        const ipc = fakeIpc();
        const bridge = createBridge(ipc);
        const received: unknown[][] = [];
        const unsubscribe = bridge.onAppCommand((...args) => received.push(args));
        const commands: AppCommand[] = [
            { command: "newWorkspace" },
            { command: "selectWorkspace", position: 9 },
            { command: "find" },
            { command: "openModelFile", path: "/models/a.gguf" },
            { command: "openSettings" }
        ];
        for (const command of commands) {
            ipc.emit(APP_COMMAND_EVENT, { sender: "ipcRenderer itself" }, command);
        }
        expect(received).toEqual(commands.map((command) => [command]));
        unsubscribe();
        ipc.emit(APP_COMMAND_EVENT, {}, { command: "find" });
        expect(received).toHaveLength(commands.length);
        expect(ipc.numListeners(APP_COMMAND_EVENT)).toBe(0);
    });

    it("drops a malformed menu command with a console warning instead of handing it to the page", () => {
        const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
        try {
            const ipc = fakeIpc();
            const received: unknown[] = [];
            createBridge(ipc).onAppCommand((command) => received.push(command));
            ipc.emit(APP_COMMAND_EVENT, {}, { command: "selectWorkspace", position: 10 });
            ipc.emit(APP_COMMAND_EVENT, {}, { command: "openModelFile", path: "" });
            ipc.emit(APP_COMMAND_EVENT, {}, { command: "find", extra: true });
            ipc.emit(APP_COMMAND_EVENT, {}, "newWorkspace");
            expect(received).toEqual([]);
            expect(warn).toHaveBeenCalledTimes(4);
            expect(warn.mock.calls[0]?.[0]).toBe(
                'Kvault dropped a malformed menu command from main: {"command":"selectWorkspace","position":10}.'
            );
        } finally {
            warn.mockRestore();
        }
    });
});

describe("ipcChannels", () => {
    it("has three prefixed, distinct channels: the RPC's, its turn events', the app info's", () => {
        const all = Object.values(ipcChannels);
        expect(all).toHaveLength(3);
        expect(new Set(all).size).toBe(all.length);
        for (const channel of all) {
            expect(channel).toMatch(/^kvault:/);
        }
    });
});
