import { describe, expect, it } from "vitest";
import type { StateStorage } from "zustand/middleware";
import { createWorkspaceStore, WORKSPACES_STORAGE_KEY } from "../../../../renderer/stores/workspaceStore";
import { defaultWorkspaceSettings } from "../../../../renderer/workspaces/workspaceDefaults";

function memoryStorage(initial: Record<string, string> = {}): StateStorage & { items: Map<string, string> } {
    const items = new Map(Object.entries(initial));
    return {
        items,
        getItem: (name) => items.get(name) ?? null,
        setItem: (name, value) => void items.set(name, value),
        removeItem: (name) => void items.delete(name)
    };
}

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
        expect(afterA).toMatchObject({ name: "Research", colour: 5, settings: { temperature: 0, systemPrompt: "Be brief.", maxTokens: defaultWorkspaceSettings.maxTokens } });
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

    it("persists workspaces and the selection, and reads them back in a new store", () => {
        const storage = memoryStorage();
        const store = createWorkspaceStore(storage);
        const a = store.getState().create();
        store.getState().appendMessage(a.id, { id: "m1", role: "user", content: "hi" });
        store.getState().create();
        store.getState().select(a.id);
        const reloaded = createWorkspaceStore(storage);
        expect(reloaded.getState().workspaces).toEqual(store.getState().workspaces);
        expect(reloaded.getState().selectedId).toBe(a.id);
    });

    it("reads back damaged storage without throwing: bad entries dropped, bad settings defaulted", () => {
        const storage = memoryStorage({
            [WORKSPACES_STORAGE_KEY]: JSON.stringify({
                version: 1,
                state: {
                    selectedId: "gone",
                    workspaces: [
                        { id: "ok", name: "Kept", colour: 2, settings: { temperature: 9, maxTokens: 12, systemPrompt: 3 }, messages: [{ id: "m", role: "system", content: "x" }, { id: "m2", role: "user", content: "y" }] },
                        { id: "ok", name: "Duplicate id" },
                        { name: "No id" },
                        "junk"
                    ]
                }
            })
        });
        const store = createWorkspaceStore(storage);
        expect(store.getState().workspaces).toEqual([{
            id: "ok", name: "Kept", colour: 2,
            settings: { systemPrompt: "", temperature: defaultWorkspaceSettings.temperature, maxTokens: 12 },
            messages: [{ id: "m2", role: "user", content: "y" }]
        }]);
        expect(store.getState().selectedId).toBe("ok");
    });
});
