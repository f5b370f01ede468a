// Issue 14, item 1, over Electron IPC: the preload's bridge (main/preload/createBridge.ts) and the
// server loop main hands each call to (host/rpc/RpcDispatcher.ts), joined by a stand-in for
// ipcRenderer.invoke that does what Electron's IPC does to the arguments (structured clone). A big
// message the UI can legitimately send is served; one over the RPC's limit is refused with the same
// typed error the WebSocket gives, without reaching main; the bridge and other windows go on.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ipcChannels } from "../../../../contract/channels.js";
import type { EngineClient } from "../../../../contract/engineProtocol.js";
import { rpcLimits } from "../../../../contract/limits.js";
import { hostMethods } from "../../../../host/rpc/hostMethods.js";
import { RpcDispatcher } from "../../../../host/rpc/RpcDispatcher.js";
import { WorkspaceStore } from "../../../../host/store/WorkspaceStore.js";
import { createBridge, type BridgeIpc } from "../../../../main/preload/createBridge.js";

const workspace = { id: "ui-big", name: "Big", colour: 0, settings: { systemPrompt: "", temperature: 0, maxTokens: 8 } };

describe("one IPC call never breaks the bridge", () => {
    let dataDir: string;
    let store: Promise<WorkspaceStore>;
    let numDelivered: number;
    let rpc: RpcDispatcher;

    /** One window's bridge: each invoke reaches the dispatcher as Electron delivers it, cloned, from caller `id`. */
    const windowBridge = (id: number) => {
        const ipc = {
            invoke: async (channel: string, ...args: unknown[]) => {
                expect(channel).toBe(ipcChannels.call);
                numDelivered++;
                const [method, params] = structuredClone(args);
                return rpc.call({ id, send: () => undefined }, method, params);
            },
            on: () => ipc,
            removeListener: () => ipc
        };
        return createBridge(ipc as unknown as BridgeIpc);
    };

    beforeEach(() => {
        dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-ipc-"));
        store = WorkspaceStore.open(dataDir);
        numDelivered = 0;
        const neverStarts = (): Promise<never> => new Promise<never>(() => undefined);
        const engine = neverStarts as () => Promise<EngineClient>;
        rpc = new RpcDispatcher(engine, hostMethods({ engine, models: neverStarts, store: () => store }));
    });

    afterEach(async () => {
        await (await store).close();
        fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("serves a 9 MB call (3,000,000 CJK characters in one message), and refuses one over the limit before main, with the numbers", async () => {
        const bridge = windowBridge(1);
        const other = windowBridge(2);
        expect(await bridge.call("saveWorkspace", { workspace })).toEqual({ ok: true, value: {} });
        const content = "漢".repeat(3_000_000);
        expect(await bridge.call("appendMessage", { workspace: workspace.id, message: { id: "m-1", role: "user", content } })).toEqual({
            ok: true,
            value: {}
        });
        const loaded = (await bridge.call("loadWorkspaces", {})) as {
            ok: true;
            value: { workspaces: { messages: { content: string }[] }[] };
        };
        expect(loaded.value.workspaces[0]!.messages[0]!.content).toBe(content);
        expect(numDelivered).toBe(3);

        const tooBig = { workspace: workspace.id, message: { id: "m-2", role: "user", content: "x".repeat(rpcLimits.maxMessageBytes) } };
        const numBytes = Buffer.byteLength(JSON.stringify(tooBig));
        expect(await bridge.call("appendMessage", tooBig)).toEqual({
            ok: false,
            error: {
                code: "rpc_message_too_large",
                message: `This RPC message is ${numBytes.toLocaleString("en-US")} bytes (UTF-8); Kvault carries at most ${rpcLimits.maxMessageBytes.toLocaleString("en-US")} bytes in one, so it was not sent on. Shorten the chat (start a new one) or the text you are sending.`
            }
        });
        expect(numDelivered).toBe(3);

        // The same window and another go on; nothing of the refused message was stored.
        expect(
            await bridge.call("appendMessage", { workspace: workspace.id, message: { id: "m-2", role: "user", content: "small" } })
        ).toEqual({
            ok: true,
            value: {}
        });
        const again = (await other.call("loadWorkspaces", {})) as { ok: true; value: { workspaces: { messages: { id: string }[] }[] } };
        expect(again.value.workspaces[0]!.messages.map((message) => message.id)).toEqual(["m-1", "m-2"]);
    });
});
