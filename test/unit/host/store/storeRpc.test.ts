import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { workspaceLimits } from "../../../../contract/workspaces.js";
import type { EngineClient } from "../../../../host/supervisor/EngineClient.js";
import { RpcServer } from "../../../../host/rpc/RpcServer.js";
import { parseStoreCall } from "../../../../host/store/parseStoreCall.js";
import { storePaths } from "../../../../host/store/storePaths.js";
import { WorkspaceStore } from "../../../../host/store/WorkspaceStore.js";
import { RendererRpc } from "../../../../main/ipc/RendererRpc.js";
import { validateRpcPayload } from "../../../../main/ipc/validateRpcPayload.js";
import { answer, tempDataDir, userMessage, workspaceA } from "./storeFixtures.js";

/** Store calls never reach the engine: any use of it is a bug. */
const noEngine = new Proxy(
    {},
    {
        get: () => {
            throw new Error("a store call used the engine");
        }
    }
) as EngineClient;

describe("store call params (both hosts: parseStoreCall)", () => {
    it.each([
        ["a path", "../etc/passwd"],
        ["a separator", "a/b"],
        ["a Windows separator", "a\\b"],
        ["dots", ".."],
        ["empty", ""],
        ["upper case (two ids, one file on a case-insensitive disk)", "UI-ABC"],
        ["a Windows device name", "con"],
        ["a NUL", "ui-a\u0000"],
        ["65 characters", "a".repeat(65)],
        ["a number", 7]
    ])("refuse a workspace id that is %s", (_, workspace) => {
        expect(() => parseStoreCall("clearChat", { workspace })).toThrow(
            expect.objectContaining({ code: "invalid_request", message: expect.stringMatching(/not a workspace or message id/) })
        );
        expect(() => parseStoreCall("saveWorkspace", { workspace: { ...workspaceA, id: workspace } })).toThrow(
            expect.objectContaining({ code: "invalid_request" })
        );
    });

    it("accept 64 characters of lower-case letters, digits, '-' and '_'", () => {
        const workspace = `a${"b-_9".repeat(15)}xyz`;
        expect(workspace).toHaveLength(64);
        expect(parseStoreCall("selectWorkspace", { workspace })).toEqual({ method: "selectWorkspace", params: { workspace } });
    });

    it("refuse a message over the size limit, naming the numbers", () => {
        const message = userMessage("m-1", "x".repeat(workspaceLimits.maxMessageChars + 1));
        expect(() => parseStoreCall("appendMessage", { workspace: "ui-a", message })).toThrow(
            /content has 4,000,001 characters; the limit is 4,000,000/
        );
    });

    it.each([
        ["saveWorkspace", { workspace: { ...workspaceA, name: "" } }, /name "" is not a name of 1 to 80 characters/],
        [
            "saveWorkspace",
            { workspace: { ...workspaceA, settings: { ...workspaceA.settings, temperature: "hot" } } },
            /settings.temperature "hot"/
        ],
        [
            "saveWorkspace",
            { workspace: { ...workspaceA, settings: { ...workspaceA.settings, systemPrompt: "x".repeat(100_001) } } },
            /systemPrompt is not a string of at most 100,000/
        ],
        ["appendMessage", { workspace: "ui-a", message: { id: "m-1", role: "system", content: "x" } }, /role "system"/],
        ["appendMessage", { workspace: "ui-a", message: "hello" }, /not an object/],
        ["importWorkspaces", { document: 42 }, /document \(a string of at most/],
        ["dropLastAnswer", { workspace: "ui-a" }, /messageId missing/],
        ["clearChat", { workspace: "ui-a", also: "x" }, /clearChat takes no field "also"/]
    ] as const)("refuse bad %s params, saying which field", (method, params, message) => {
        expect(() => parseStoreCall(method, params as never)).toThrow(message);
    });

    it("rebuild params from known fields only, over Electron IPC too", () => {
        const call = validateRpcPayload("saveWorkspace", { workspace: { ...workspaceA, messages: [], extra: 1 } });
        expect(call).toEqual({ method: "saveWorkspace", params: { workspace: workspaceA } });
        expect(() => validateRpcPayload("appendMessage", { workspace: "../x", message: userMessage("m-1") })).toThrow(
            /not a workspace or message id/
        );
    });
});

describe("the store over the hosts' RPC", () => {
    let dataDir: string;
    let store: WorkspaceStore;

    beforeEach(async () => {
        dataDir = tempDataDir();
        store = await WorkspaceStore.open(dataDir);
    });

    afterEach(async () => {
        await store.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it("over the headless WebSocket: answers bad input with invalid_request and keeps serving, in call order", async () => {
        const rpc = new RpcServer(noEngine, async () => store);
        const server = http.createServer();
        server.on("upgrade", (request, socket, head) => rpc.handleUpgrade(request, socket, head));
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
        const socket = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
        await new Promise<void>((resolve, reject) => {
            socket.once("open", () => resolve());
            socket.once("error", reject);
        });
        type Reply = { id: number; result?: unknown; error?: { code: string; message: string } };
        const replies = new Map<number, Reply>();
        socket.on("message", (data) => {
            const message = JSON.parse(String(data)) as Reply;
            replies.set(message.id, message);
        });
        const calls: [string, unknown][] = [
            ["appendMessage", { workspace: "../../outside", message: userMessage("m-1") }],
            ["saveWorkspace", "not an object"],
            ["appendMessage", { workspace: workspaceA.id, message: { id: "m-1", role: "user", content: { nested: true } } }],
            ["saveWorkspace", { workspace: workspaceA }],
            ["appendMessage", { workspace: workspaceA.id, message: userMessage("m-1") }],
            ["appendMessage", { workspace: workspaceA.id, message: answer("m-2") }],
            ["dropLastAnswer", { workspace: workspaceA.id, messageId: "m-2" }],
            ["selectWorkspace", { workspace: workspaceA.id }],
            ["loadWorkspaces", {}]
        ];
        calls.forEach(([method, params], index) => socket.send(JSON.stringify({ id: index + 1, method, params })));
        for (let waited = 0; replies.size < calls.length; waited += 10) {
            expect(waited, "every call answered within 5 s").toBeLessThan(5_000);
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect([1, 2, 3].map((id) => replies.get(id)?.error?.code)).toEqual(["invalid_request", "invalid_request", "invalid_request"]);
        expect(replies.get(7)?.result).toEqual({ dropped: true });
        expect(replies.get(9)?.result).toEqual({
            workspaces: [{ ...workspaceA, messages: [userMessage("m-1")] }],
            selectedId: workspaceA.id,
            problems: []
        });
        expect(fs.readdirSync(storePaths(dataDir).directory).sort()).toEqual(["index.json", "ui-aaaa.jsonl"]);
        expect(fs.readdirSync(dataDir)).toEqual(["workspaces"]);
        socket.close();
        await rpc.close();
        await new Promise((resolve) => server.close(resolve));
    });

    it("over Electron IPC: store calls answer without waiting for the engine, and a host without a store says so", async () => {
        const neverStarts = new Promise<EngineClient>(() => undefined);
        const rpc = new RendererRpc(
            () => neverStarts,
            async () => store
        );
        const caller = { id: 1, send: () => undefined };
        expect(await rpc.call(caller, "saveWorkspace", { workspace: workspaceA })).toEqual({ ok: true, value: {} });
        expect(await rpc.call(caller, "appendMessage", { workspace: workspaceA.id, message: userMessage("m-1") })).toEqual({
            ok: true,
            value: {}
        });
        expect(await rpc.call(caller, "clearChat", { workspace: "ui-none" })).toMatchObject({
            ok: false,
            error: { code: "workspace_not_found" }
        });
        expect(await rpc.call(caller, "loadWorkspaces", {})).toMatchObject({
            ok: true,
            value: { workspaces: [{ id: workspaceA.id, messages: [{ id: "m-1" }] }] }
        });
        const withoutStore = new RendererRpc(() => neverStarts);
        expect(await withoutStore.call(caller, "loadWorkspaces", {})).toMatchObject({ ok: false, error: { code: "store_unavailable" } });
    });
});
