import { beforeEach, describe, expect, it } from "vitest";
import { createStorageNoticeStore } from "../../../../renderer/stores/storageNoticeStore.js";
import { createWorkspaceStore } from "../../../../renderer/stores/workspaceStore.js";
import { backendValue } from "../../../../renderer/workspaces/BackendSelect.js";
import { defaultWorkspaceSettings } from "../../../../renderer/workspaces/workspaceDefaults.js";
import { WorkspaceSync } from "../../../../renderer/workspaces/WorkspaceSync.js";
import { FakeRpc, settle } from "../FakeRpc.js";

// A workspace's backend (where its turns run) as the page changes it: saved to the host with the
// rest of the workspace, and taken off again for this computer.
describe("a workspace's backend in the page", () => {
    let rpc: FakeRpc;
    let workspaces: ReturnType<typeof createWorkspaceStore>;

    beforeEach(async () => {
        rpc = new FakeRpc();
        rpc.answers.saveWorkspace = () => ({});
        rpc.answers.loadWorkspaces = () => ({
            workspaces: [{ id: "ui-a", name: "A", colour: 0, settings: defaultWorkspaceSettings, messages: [] }],
            selectedId: "ui-a",
            problems: []
        });
        workspaces = createWorkspaceStore({ load: { kind: "loading" } });
        new WorkspaceSync(rpc, { workspaces, notices: createStorageNoticeStore() }, { read: () => null, archive: () => undefined });
        await settle();
    });

    it("is saved with the workspace when chosen, and dropped for this computer", async () => {
        workspaces.getState().setBackend("ui-a", { name: "gpu", model: "org/m" });
        await settle();
        workspaces.getState().setBackend("ui-a", undefined);
        await settle();
        const saves = rpc.calls.filter((call) => call.method === "saveWorkspace").map((call) => call.params);
        expect(saves).toEqual([
            {
                workspace: {
                    id: "ui-a",
                    name: "A",
                    colour: 0,
                    settings: defaultWorkspaceSettings,
                    backend: { name: "gpu", model: "org/m" }
                }
            },
            { workspace: { id: "ui-a", name: "A", colour: 0, settings: defaultWorkspaceSettings } }
        ]);
        expect(workspaces.getState().workspaces[0]).not.toHaveProperty("backend");
    });

    it("is kept when the workspace is renamed", async () => {
        workspaces.getState().setBackend("ui-a", { name: "gpu", model: "m" });
        workspaces.getState().rename("ui-a", "B");
        await settle();
        const last = rpc.calls.filter((call) => call.method === "saveWorkspace").at(-1)!.params as { workspace: unknown };
        expect(last.workspace).toMatchObject({ name: "B", backend: { name: "gpu", model: "m" } });
    });

    it("is the select's value NAME/<model id>, empty for this computer", () => {
        expect(backendValue({ backend: { name: "gpu", model: "org/m" } })).toBe("gpu/org/m");
        expect(backendValue({})).toBe("");
    });
});
