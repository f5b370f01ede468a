import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { EngineClient } from "../../../../contract/engineProtocol.js";
import { workspaceLimits } from "../../../../contract/workspaces.js";
import { parseRpcCall, type RpcCall } from "../../../../contract/rpc/parseRpcCall.js";
import { hostMethods } from "../../../../host/rpc/hostMethods.js";
import { RpcDispatcher } from "../../../../host/rpc/RpcDispatcher.js";
import { RpcServer } from "../../../../host/rpc/RpcServer.js";
import { storePaths } from "../../../../host/store/storePaths.js";
import { WorkspaceStore } from "../../../../host/store/WorkspaceStore.js";
import { splitUtf8 } from "../../../../contract/limits.js";
import { answer, tempDataDir, userMessage, workspaceA } from "./storeFixtures.js";

/** Store calls never reach the engine nor the model manager: any use of them is a bug. */
const neverStarts = (): Promise<never> => new Promise<never>(() => undefined);

/** The dispatcher both hosts share, over `store` and an engine that never starts. */
function storeHost(store?: () => Promise<WorkspaceStore>): RpcDispatcher {
    const engine = neverStarts as () => Promise<EngineClient>;
    return new RpcDispatcher(engine, hostMethods({ engine, models: neverStarts, ...(store === undefined ? {} : { store }) }));
}

/** The store call as the RPC spec rebuilt it; throws the refusal's message (the hosts answer it as invalid_request). */
function checkedStoreCall(method: string, params: unknown): RpcCall {
    const parsed = parseRpcCall(method, params);
    if (!parsed.ok) {
        throw Object.assign(new Error(parsed.message), { code: "invalid_request" });
    }
    return parsed.call;
}

describe("store call params (both hosts: the RPC spec)", () => {
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
        expect(() => checkedStoreCall("clearChat", { workspace })).toThrow(
            expect.objectContaining({ code: "invalid_request", message: expect.stringMatching(/not a workspace or message id/) })
        );
        expect(() => checkedStoreCall("saveWorkspace", { workspace: { ...workspaceA, id: workspace } })).toThrow(
            expect.objectContaining({ code: "invalid_request" })
        );
    });

    it("accept 64 characters of lower-case letters, digits, '-' and '_'", () => {
        const workspace = `a${"b-_9".repeat(15)}xyz`;
        expect(workspace).toHaveLength(64);
        expect(checkedStoreCall("selectWorkspace", { workspace })).toEqual({ method: "selectWorkspace", params: { workspace } });
    });

    it("refuse a message over the size limit, naming the numbers", () => {
        const message = userMessage("m-1", "x".repeat(workspaceLimits.maxMessageChars + 1));
        expect(() => checkedStoreCall("appendMessage", { workspace: "ui-a", message })).toThrow(
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
        ["importWorkspaces", { importId: "i-1", part: 0, numParts: 1, text: 42 }, /^text must be a string; got 42\.$/],
        [
            "importWorkspaces",
            { importId: "i-1", part: 2, numParts: 2, text: "{}" },
            /^part is 2, but a document in 2 part\(s\) has parts 0 to 1; number them from 0\.$/
        ],
        ["dropLastAnswer", { workspace: "ui-a" }, /messageId missing/],
        ["clearChat", { workspace: "ui-a", also: "x" }, /clearChat takes no field "also"/]
    ] as const)("refuse bad %s params, saying which field", (method, params, message) => {
        expect(() => checkedStoreCall(method, params as never)).toThrow(message);
    });

    it("rebuild params from known fields only, over Electron IPC too", () => {
        const call = checkedStoreCall("saveWorkspace", { workspace: { ...workspaceA, messages: [], extra: 1 } });
        expect(call).toEqual({ method: "saveWorkspace", params: { workspace: workspaceA } });
        expect(() => checkedStoreCall("appendMessage", { workspace: "../x", message: userMessage("m-1") })).toThrow(
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
        const rpc = new RpcServer(storeHost(async () => store));
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

    it("over the dispatcher Electron IPC uses: store calls answer without waiting for the engine, and a host without a store says so", async () => {
        const rpc = storeHost(async () => store);
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
        const withoutStore = storeHost();
        expect(await withoutStore.call(caller, "loadWorkspaces", {})).toMatchObject({ ok: false, error: { code: "store_unavailable" } });
    });

    it("takes an old document in parts that each fit one RPC message, in order, per caller; a caller that goes away drops its own", async () => {
        const rpc = storeHost(async () => store);
        const document = JSON.stringify({
            state: { workspaces: [{ ...workspaceA, messages: [userMessage("m-1", "漢".repeat(3_000))] }], selectedId: workspaceA.id },
            version: 1
        });
        const parts = splitUtf8(document, 4_000);
        expect(parts.length).toBe(3);
        const alice = { id: 1, send: () => undefined };
        const bob = { id: 2, send: () => undefined };
        const part = (caller: typeof alice, index: number, importId = "import-a") =>
            rpc.call(caller, "importWorkspaces", { importId, part: index, numParts: parts.length, text: parts[index] });

        expect(await part(alice, 0)).toEqual({ ok: true, value: { done: false, numPartsReceived: 1 } });
        // Another caller's parts are its own; one out of order is refused, and drops only that caller's import.
        expect(await part(bob, 1)).toMatchObject({
            ok: false,
            error: { code: "invalid_request", message: expect.stringMatching(/no such import was started \(part 0 starts one\)/) }
        });
        expect(await part(alice, 2)).toMatchObject({
            ok: false,
            error: {
                code: "invalid_request",
                message: expect.stringMatching(/^importWorkspaces got part 2 of 3 of import import-a, but part 1 of 3 was next/)
            }
        });
        expect(await part(alice, 1)).toMatchObject({ ok: false, error: { message: expect.stringMatching(/no such import was started/) } });

        expect(await part(bob, 0, "import-b")).toMatchObject({ ok: true, value: { done: false } });
        rpc.closeCaller(bob.id);
        expect(await part(bob, 1, "import-b")).toMatchObject({
            ok: false,
            error: { message: expect.stringMatching(/no such import was started/) }
        });

        expect(await part(alice, 0)).toMatchObject({ ok: true, value: { done: false } });
        expect(await part(alice, 1)).toMatchObject({ ok: true, value: { done: false, numPartsReceived: 2 } });
        const done = await part(alice, 2);
        expect(done).toMatchObject({ ok: true, value: { done: true, numImported: 1, selectedId: workspaceA.id } });
        expect((await store.load()).workspaces).toEqual([{ ...workspaceA, messages: [userMessage("m-1", "漢".repeat(3_000))] }]);
    });
});
