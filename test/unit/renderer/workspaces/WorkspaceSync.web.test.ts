import { beforeEach, describe, expect, it } from "vitest";
import { rpcLimits } from "../../../../contract/limits.js";
import type { LoadedWorkspaces, StoreProblem } from "../../../../contract/workspaces.js";
import { ChatController } from "../../../../renderer/chat/ChatController.js";
import { createDraftStore } from "../../../../renderer/stores/draftStore.js";
import { createStorageNoticeStore } from "../../../../renderer/stores/storageNoticeStore.js";
import { createTurnStore } from "../../../../renderer/stores/turnStore.js";
import { createWorkspaceStore } from "../../../../renderer/stores/workspaceStore.js";
import { RpcError } from "../../../../renderer/rpc/RpcError.js";
import { defaultWorkspaceSettings } from "../../../../renderer/workspaces/workspaceDefaults.js";
import { WorkspaceSync, type LegacyWorkspaces } from "../../../../renderer/workspaces/WorkspaceSync.js";
import { describeStoreProblem } from "../../../../renderer/workspaces/storageNoticeText.js";
import { FakeRpc, settle, usage } from "../FakeRpc.js";

const saved = {
    id: "ui-a",
    name: "Research",
    colour: 1,
    settings: defaultWorkspaceSettings,
    messages: [
        { id: "m-1", role: "user", content: "Hi" },
        { id: "m-2", role: "assistant", content: "Hello", finish: "stop", usage }
    ]
} as const;
const problem: StoreProblem = {
    workspace: "ui-a",
    workspaceName: "Research",
    file: "/data/workspaces/ui-a.jsonl",
    line: 7,
    kind: "corrupt",
    bytes: 312,
    reason: "not JSON",
    copy: "/data/workspaces/ui-a.jsonl.corrupt-2026-01-05T05-04-49-123Z"
};

function memoryLegacy(document: string | null): LegacyWorkspaces & { archived: boolean } {
    const legacy = { archived: false, read: () => (legacy.archived ? null : document), archive: () => void (legacy.archived = true) };
    return legacy;
}

describe("WorkspaceSync", () => {
    let rpc: FakeRpc;
    let workspaces: ReturnType<typeof createWorkspaceStore>;
    let notices: ReturnType<typeof createStorageNoticeStore>;
    const writes = () =>
        rpc.calls
            .filter((call) => call.method !== "loadWorkspaces" && call.method !== "importWorkspaces")
            .map((call) => [call.method, call.params]);

    beforeEach(() => {
        rpc = new FakeRpc();
        workspaces = createWorkspaceStore({ load: { kind: "loading" } });
        notices = createStorageNoticeStore();
        for (const method of ["saveWorkspace", "removeWorkspace", "selectWorkspace", "appendMessage", "clearChat"] as const) {
            rpc.answers[method] = () => ({});
        }
        rpc.answers.dropLastAnswer = () => ({ dropped: true });
    });

    it("stays loading until the connection opens, then shows the host's workspaces and the problems it set aside", async () => {
        rpc.status = { kind: "connecting" };
        rpc.answers.loadWorkspaces = (): LoadedWorkspaces => ({ workspaces: [saved], selectedId: "ui-a", problems: [problem] });
        new WorkspaceSync(rpc, { workspaces, notices }, memoryLegacy(null));
        await settle();
        expect(workspaces.getState().load.kind).toBe("loading");
        rpc.setStatus({ kind: "open" });
        await settle();
        expect(workspaces.getState()).toMatchObject({ load: { kind: "ready" }, selectedId: "ui-a", workspaces: [saved] });
        expect(notices.getState().problems).toEqual([problem]);
        expect(writes()).toEqual([]); // loading writes nothing back
        expect(describeStoreProblem(problem)).toBe(
            "“Research”, line 7 of its chat file: a damaged record (not JSON); 312 bytes set aside."
        );
    });

    it("hands the page's old localStorage workspaces to an empty host once, then sets them aside", async () => {
        const legacy = memoryLegacy('{"state":{"workspaces":[]},"version":1}');
        rpc.answers.loadWorkspaces = () => ({ workspaces: [], selectedId: null, problems: [] });
        rpc.answers.importWorkspaces = ({ importId, part, numParts, text }) => {
            expect([importId, part, numParts, text]).toEqual([
                expect.stringMatching(/^import-[0-9a-f]{32}$/),
                0,
                1,
                '{"state":{"workspaces":[]},"version":1}'
            ]);
            return { done: true, workspaces: [saved], selectedId: "ui-a", problems: [], numImported: 1 };
        };
        new WorkspaceSync(rpc, { workspaces, notices }, legacy);
        await settle();
        expect(workspaces.getState().workspaces).toEqual([saved]);
        expect(legacy.archived).toBe(true);
    });

    it("hands a document too big for one RPC message over in parts of at most rpcLimits.maxImportPartBytes, in order", async () => {
        // 2,000,000 CJK characters are 6,000,000 bytes of UTF-8: two parts.
        const document = JSON.stringify({ state: { workspaces: [], note: "漢".repeat(2_000_000) }, version: 1 });
        const legacy = memoryLegacy(document);
        const received: { importId: string; part: number; numParts: number; text: string }[] = [];
        rpc.answers.loadWorkspaces = () => ({ workspaces: [], selectedId: null, problems: [] });
        rpc.answers.importWorkspaces = (params) => {
            received.push(params);
            return params.part + 1 < params.numParts
                ? { done: false, numPartsReceived: params.part + 1 }
                : { done: true, workspaces: [saved], selectedId: "ui-a", problems: [], numImported: 1 };
        };
        new WorkspaceSync(rpc, { workspaces, notices }, legacy);
        for (let waited = 0; waited < 5_000 && !legacy.archived; waited += 10) {
            await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(received.map(({ part, numParts }) => [part, numParts])).toEqual([
            [0, 2],
            [1, 2]
        ]);
        expect(new Set(received.map(({ importId }) => importId)).size).toBe(1);
        expect(received.map(({ text }) => text).join("")).toBe(document);
        for (const { text } of received) {
            expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(rpcLimits.maxImportPartBytes);
        }
        expect(workspaces.getState().workspaces).toEqual([saved]);
        expect(legacy.archived).toBe(true);
    });

    it("makes a first workspace when the host has none, and saves it", async () => {
        rpc.answers.loadWorkspaces = () => ({ workspaces: [], selectedId: null, problems: [] });
        new WorkspaceSync(rpc, { workspaces, notices }, memoryLegacy(null));
        await settle();
        const [first] = workspaces.getState().workspaces;
        expect(first?.name).toBe("Workspace 1");
        expect(writes()).toEqual([
            ["saveWorkspace", { workspace: { id: first!.id, name: "Workspace 1", colour: 0, settings: defaultWorkspaceSettings } }],
            ["selectWorkspace", { workspace: first!.id }]
        ]);
    });

    it("sends each change the UI makes as the host's call, in order", async () => {
        rpc.answers.loadWorkspaces = () => ({ workspaces: [saved], selectedId: "ui-a", problems: [] });
        new WorkspaceSync(rpc, { workspaces, notices }, memoryLegacy(null));
        await settle();
        const chat = new ChatController(rpc, { workspaces, turns: createTurnStore(), drafts: createDraftStore() });
        rpc.answers.forgetWorkspace = () => ({});
        const state = () => workspaces.getState();

        state().rename("ui-a", "Renamed");
        state().setColour("ui-a", 1); // no change: nothing to save
        state().updateSettings("ui-a", { temperature: 0 });
        expect(chat.regenerate("ui-a")).toBe(true); // keeps the answer m-2 as a branch, asks again
        rpc.turns[0]!.finish({ text: "Again", finishReason: "stop", usage });
        await settle();
        const answerId = state().workspaces[0]!.messages[1]!.id;
        const second = state().create();
        state().select("ui-a");
        await chat.clearChat("ui-a");
        await chat.deleteWorkspace(second.id);

        // The answer is the host's to keep (its turn named answerId): the page mirrors it and sends nothing back.
        // It answers the question m-1, beside the earlier answer m-2, which stays a branch.
        expect(rpc.turns[0]!.request).toMatchObject({ answerId, answerParent: "m-1" });
        expect(writes().filter(([method]) => !["chat", "forgetWorkspace", "activeTurns"].includes(method as string))).toEqual([
            ["saveWorkspace", { workspace: { id: "ui-a", name: "Renamed", colour: 1, settings: defaultWorkspaceSettings } }],
            [
                "saveWorkspace",
                { workspace: { id: "ui-a", name: "Renamed", colour: 1, settings: { ...defaultWorkspaceSettings, temperature: 0 } } }
            ],
            ["saveWorkspace", { workspace: { id: second.id, name: "Workspace 1", colour: 0, settings: defaultWorkspaceSettings } }],
            ["selectWorkspace", { workspace: second.id }],
            ["selectWorkspace", { workspace: "ui-a" }],
            ["clearChat", { workspace: "ui-a" }],
            ["removeWorkspace", { workspace: second.id }]
        ]);
    });

    it("shows a save the host refuses, or one made while disconnected, instead of swallowing it", async () => {
        rpc.answers.loadWorkspaces = () => ({ workspaces: [saved], selectedId: "ui-a", problems: [] });
        rpc.answers.appendMessage = () => {
            throw new RpcError(
                "store_write_failed",
                "Could not save to /data/workspaces/ui-a.jsonl: ENOSPC. The disk is full: free some space, then try again."
            );
        };
        new WorkspaceSync(rpc, { workspaces, notices }, memoryLegacy(null));
        await settle();
        workspaces.getState().appendMessage("ui-a", { id: "m-3", role: "user", content: "More" });
        await settle();
        expect(notices.getState().saveFailure).toEqual({ message: expect.stringMatching(/disk is full/), numFailed: 1 });
        expect(workspaces.getState().workspaces[0]!.messages).toHaveLength(3); // optimistic: the UI keeps what the user did
        rpc.setStatus({ kind: "reconnecting", attempt: 1 });
        workspaces.getState().rename("ui-a", "Offline");
        await settle();
        expect(notices.getState().saveFailure).toEqual({ message: "Not connected.", numFailed: 2 });
        notices.getState().dismissSaveFailure();
        expect(notices.getState().saveFailure).toBeUndefined();
    });

    it("says why the workspaces could not be loaded, and tries again on the next connection", async () => {
        let fail = true;
        rpc.answers.loadWorkspaces = () => {
            if (fail) {
                throw new RpcError(
                    "store_version_unsupported",
                    "The chats in /data/workspaces/index.json are in format 3; this Kvault reads formats up to 2."
                );
            }
            return { workspaces: [saved], selectedId: "ui-a", problems: [] };
        };
        new WorkspaceSync(rpc, { workspaces, notices }, memoryLegacy(null));
        await settle();
        expect(workspaces.getState().load).toEqual({ kind: "failed", message: expect.stringMatching(/format 3/) });
        expect(workspaces.getState().workspaces).toEqual([]); // nothing made over a store it could not read
        fail = false;
        rpc.setStatus({ kind: "reconnecting", attempt: 1 });
        rpc.setStatus({ kind: "open" });
        await settle();
        expect(workspaces.getState()).toMatchObject({ load: { kind: "ready" }, workspaces: [saved] });
    });
});
