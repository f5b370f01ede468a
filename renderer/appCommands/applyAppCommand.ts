import { MAX_WORKSPACE_SHORTCUT, type AppCommand } from "../../contract/appCommands.js";
import type { ModelController } from "../model/ModelController.js";
import type { WorkspaceStore } from "../stores/workspaceStore.js";
import type { PanelRequestState } from "./panelRequestStore.js";

/** What a menu command acts on; the page's own stores and controllers (useAppCommands), or a test's. */
export interface AppCommandTargets {
    readonly workspaces: WorkspaceStore;
    readonly model: Pick<ModelController, "inspect">;
    readonly panels: { getState(): Pick<PanelRequestState, "reveal" | "showModelFile"> };
    /**
     * Puts the keyboard in the find box; this renderer has none, so it is the selected workspace's
     * message box. Says what it focused, or "none" when there is nothing to focus (no workspace).
     */
    focusFind(): AppCommandOutcome;
}

/** What a command did: the values a test (and the console) can read. */
export type AppCommandOutcome =
    | "workspaceCreated"
    | "workspaceSelected"
    | "composerFocused"
    | "modelInspecting"
    | "settingsShown"
    /** Nothing to do: the workspaces are still loading, or there is none at that place, or nothing to focus. */
    | "none";

/**
 * Does what the menu asked, as the UI's own controls do it: New makes and selects a workspace
 * (only once the workspaces have loaded, as the New button), 1…9 select by place (9 is the last),
 * Open Model… shows the model panel and inspects the file (Load is then offered there), Settings…
 * shows the settings panel.
 */
export function applyAppCommand(command: AppCommand, targets: AppCommandTargets): AppCommandOutcome {
    switch (command.command) {
        case "newWorkspace": {
            const workspaces = targets.workspaces.getState();
            if (workspaces.load.kind !== "ready") {
                return "none";
            }
            workspaces.create();
            return "workspaceCreated";
        }
        case "selectWorkspace": {
            const { workspaces, select } = targets.workspaces.getState();
            const index = command.position === MAX_WORKSPACE_SHORTCUT ? workspaces.length - 1 : command.position - 1;
            const workspace = workspaces[index];
            if (workspace === undefined) {
                return "none";
            }
            select(workspace.id);
            return "workspaceSelected";
        }
        case "find":
            return targets.focusFind();
        case "openModelFile":
            targets.panels.getState().showModelFile(command.path);
            void targets.model.inspect(command.path);
            return "modelInspecting";
        case "openSettings":
            targets.panels.getState().reveal("settings");
            return "settingsShown";
    }
}
