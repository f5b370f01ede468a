import { describe, expect, it } from "vitest";
import { createWorkspaceStore } from "../../../../renderer/stores/workspaceStore.js";
import { defaultWorkspaceSettings } from "../../../../renderer/workspaces/workspaceDefaults.js";

describe("workspaceStore", () => {
    it("creates numbered workspaces in distinct colours with default settings, selecting each", () => {
        const store = createWorkspaceStore();
        const first = store.getState().create();
        const second = store.getState().create();
        expect([first.name, second.name]).toEqual(["Workspace 1", "Workspace 2"]);
        expect(first.colour).not.toBe(second.colour);
        expect(first.id).toMatch(/^ui-[0-9a-f]{32}$/);
        expect(first.settings).toEqual(defaultWorkspaceSettings);
        expect(store.getState().selectedId).toBe(second.id);
    });

    it("renames (trimmed, never to empty), recolours and updates settings of one workspace only", () => {
        const store = createWorkspaceStore();
        const a = store.getState().create();
        const b = store.getState().create();
        store.getState().rename(a.id, "  Research  ");
        store.getState().rename(a.id, "   ");
        store.getState().setColour(a.id, 5);
        store.getState().updateSettings(a.id, { temperature: 0, systemPrompt: "Be brief." });
        const [afterA, afterB] = store.getState().workspaces;
        expect(afterA).toMatchObject({
            name: "Research",
            colour: 5,
            settings: { temperature: 0, systemPrompt: "Be brief.", maxTokens: defaultWorkspaceSettings.maxTokens }
        });
        expect(afterB).toEqual(b);
    });

    it("removes a workspace and selects its neighbour", () => {
        const store = createWorkspaceStore();
        const a = store.getState().create();
        const b = store.getState().create();
        const c = store.getState().create();
        store.getState().select(b.id);
        store.getState().remove(b.id);
        expect(store.getState().workspaces.map((workspace) => workspace.id)).toEqual([a.id, c.id]);
        expect(store.getState().selectedId).toBe(c.id);
        store.getState().remove(c.id);
        store.getState().remove(a.id);
        expect(store.getState().selectedId).toBeUndefined();
    });

    it("drops only a last message that is an answer (Regenerate)", () => {
        const store = createWorkspaceStore();
        const { id } = store.getState().create();
        store.getState().appendMessage(id, { id: "m1", role: "user", content: "hi" });
        expect(store.getState().dropLastAnswer(id)).toBeUndefined();
        store.getState().appendMessage(id, { id: "m2", role: "assistant", content: "hello", finish: "stop" });
        expect(store.getState().dropLastAnswer(id)?.id).toBe("m2");
        expect(store.getState().workspaces[0]!.messages.map((message) => message.id)).toEqual(["m1"]);
    });

    it("loads: not ready until hydrated with the host's workspaces, which replace everything", () => {
        const store = createWorkspaceStore({ load: { kind: "loading" } });
        expect(store.getState().load.kind).toBe("loading");
        const workspace = {
            id: "ui-a",
            name: "Kept",
            colour: 2,
            settings: defaultWorkspaceSettings,
            messages: [{ id: "m-1", role: "user", content: "hi" }]
        } as const;
        store.getState().hydrate([workspace, { ...workspace, id: "ui-b", name: "Other" }], "ui-b");
        expect(store.getState()).toMatchObject({ load: { kind: "ready" }, selectedId: "ui-b" });
        expect(store.getState().workspaces.map((item) => item.name)).toEqual(["Kept", "Other"]);
        store.getState().hydrate([workspace], "gone");
        expect(store.getState().selectedId).toBe("ui-a");
        store.getState().loadFailed("The disk is full.");
        expect(store.getState().load).toEqual({ kind: "failed", message: "The disk is full." });
    });

    it("leaves an empty chat as it is on Clear (nothing to save)", () => {
        const store = createWorkspaceStore();
        const { id } = store.getState().create();
        const before = store.getState().workspaces;
        store.getState().clearChat(id);
        expect(store.getState().workspaces).toBe(before);
    });
});
