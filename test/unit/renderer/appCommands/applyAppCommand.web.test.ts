import { describe, expect, it, vi } from "vitest";
import { parseAppCommand } from "../../../../contract/appCommands.js";
import type { ModelFacts } from "../../../../contract/models.js";
import { applyAppCommand, type AppCommandOutcome, type AppCommandTargets } from "../../../../renderer/appCommands/applyAppCommand.js";
import { createPanelRequestStore } from "../../../../renderer/appCommands/panelRequestStore.js";
import { ModelController } from "../../../../renderer/model/ModelController.js";
import { createEngineStore } from "../../../../renderer/stores/engineStore.js";
import { createModelStore } from "../../../../renderer/stores/modelStore.js";
import { createTurnStore } from "../../../../renderer/stores/turnStore.js";
import { createWorkspaceStore, type WorkspaceLoad } from "../../../../renderer/stores/workspaceStore.js";
import { FakeRpc } from "../FakeRpc.js";

const facts = { path: "/models/qwen.gguf", fileName: "qwen.gguf", architecture: "qwen2" } as ModelFacts;

/** The page's targets, made as renderer/main.tsx makes them: real stores, the real model controller over a recording RPC. */
function setup(load: WorkspaceLoad = { kind: "ready" }) {
    const rpc = new FakeRpc();
    rpc.answers.inspectModel = () => facts;
    const model = createModelStore();
    const workspaces = createWorkspaceStore({ load });
    const panels = createPanelRequestStore();
    const focused: string[] = [];
    const targets: AppCommandTargets = {
        workspaces,
        model: new ModelController(rpc, { model, engine: createEngineStore(), turns: createTurnStore() }),
        panels,
        focusFind: () => {
            focused.push("composer");
            return "composerFocused";
        }
    };
    return { rpc, model, workspaces, panels, focused, targets };
}

describe("applyAppCommand", () => {
    it("New Workspace makes a workspace and selects it, as the New button does", () => {
        const { workspaces, targets } = setup();
        workspaces.getState().create();
        expect(applyAppCommand({ command: "newWorkspace" }, targets)).toBe("workspaceCreated");
        const { workspaces: all, selectedId } = workspaces.getState();
        expect(all.map((workspace) => workspace.name)).toEqual(["Workspace 1", "Workspace 2"]);
        expect(selectedId).toBe(all[1]?.id);
    });

    it("New Workspace does nothing while the workspaces are still loading (the New button is disabled then)", () => {
        const { workspaces, targets } = setup({ kind: "loading" });
        expect(applyAppCommand({ command: "newWorkspace" }, targets)).toBe("none");
        expect(workspaces.getState().workspaces).toEqual([]);
    });

    it("Workspace 1…8 select by place, 9 selects the last whatever their number, and a place with none changes nothing", () => {
        const { workspaces, targets } = setup();
        const made = [1, 2, 3, 4].map(() => workspaces.getState().create());
        const select = (position: number): [AppCommandOutcome, string | undefined] => [
            applyAppCommand({ command: "selectWorkspace", position }, targets),
            workspaces.getState().selectedId
        ];
        expect(select(1)).toEqual(["workspaceSelected", made[0]?.id]);
        expect(select(3)).toEqual(["workspaceSelected", made[2]?.id]);
        expect(select(9)).toEqual(["workspaceSelected", made[3]?.id]);
        expect(select(5)).toEqual(["none", made[3]?.id]);
        expect(select(2)).toEqual(["workspaceSelected", made[1]?.id]);
    });

    it("Workspace 9 with no workspaces changes nothing", () => {
        const { workspaces, targets } = setup();
        expect(applyAppCommand({ command: "selectWorkspace", position: 9 }, targets)).toBe("none");
        expect(workspaces.getState().selectedId).toBeUndefined();
    });

    it("Open Model… shows the model panel with the path in its box and inspects the file, as Inspect does", async () => {
        const { rpc, model, panels, targets } = setup();
        expect(applyAppCommand({ command: "openModelFile", path: "/models/qwen.gguf" }, targets)).toBe("modelInspecting");
        expect(panels.getState()).toMatchObject({ modelFile: "/models/qwen.gguf", requests: { model: 1, settings: 0 } });
        await vi.waitFor(() => expect(model.getState().inspection).toEqual({ running: false, path: "/models/qwen.gguf", facts }));
        expect(rpc.calls).toEqual([{ method: "inspectModel", params: { path: "/models/qwen.gguf" } }]);
    });

    it("Settings… asks the settings panel to show itself, once per command", () => {
        const { panels, targets } = setup();
        expect(applyAppCommand({ command: "openSettings" }, targets)).toBe("settingsShown");
        applyAppCommand({ command: "openSettings" }, targets);
        expect(panels.getState().requests).toEqual({ model: 0, settings: 2 });
    });

    it("Find puts the keyboard where focusFind says (the composer: the renderer has no find box)", () => {
        const { focused, targets } = setup();
        expect(applyAppCommand({ command: "find" }, targets)).toBe("composerFocused");
        expect(focused).toEqual(["composer"]);
    });

    it("acts on each command as main sends it, once checked as the preload checks it (parseAppCommand)", async () => {
        const { model, workspaces, panels, targets } = setup();
        const sent: unknown[] = [
            { command: "newWorkspace" },
            { command: "newWorkspace" },
            { command: "selectWorkspace", position: 1 },
            { command: "selectWorkspace", position: 0 },
            { command: "openModelFile", path: "/models/qwen.gguf" },
            { command: "openSettings", path: "/etc/passwd" }
        ];
        const outcomes = sent.map((value) => {
            const command = parseAppCommand(value);
            return command === undefined ? "dropped" : applyAppCommand(command, targets);
        });
        expect(outcomes).toEqual(["workspaceCreated", "workspaceCreated", "workspaceSelected", "dropped", "modelInspecting", "dropped"]);
        expect(workspaces.getState().selectedId).toBe(workspaces.getState().workspaces[0]?.id);
        expect(panels.getState().requests).toEqual({ model: 1, settings: 0 });
        await vi.waitFor(() => expect(model.getState().inspection.facts).toEqual(facts));
    });
});
