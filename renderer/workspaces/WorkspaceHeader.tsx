import { useState } from "react";
import { useAppServices } from "../AppServices.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { ConfirmDialog } from "./ConfirmDialog.js";
import { RenameForm } from "./RenameForm.js";
import { Swatch } from "./Swatch.js";
import type { Workspace } from "./Workspace.js";
import { paletteColour } from "./workspacePalette.js";
import { WorkspaceExportButtons } from "./WorkspaceExportButtons.js";
import { WorkspaceSettingsForm } from "./WorkspaceSettingsForm.js";

/** The selected workspace's name with Rename and Delete, and its settings. */
export function WorkspaceHeader({ workspace }: { readonly workspace: Workspace }) {
    const { chat } = useAppServices();
    const [renaming, setRenaming] = useState(false);
    const [confirmingDelete, setConfirmingDelete] = useState(false);
    return (
        <header className="workspace-header">
            <div className="workspace-title-row">
                {renaming ? (
                    <RenameForm
                        name={workspace.name}
                        onRename={(name) => useWorkspaceStore.getState().rename(workspace.id, name)}
                        onDone={() => setRenaming(false)}
                    />
                ) : (
                    <>
                        <h2 className="workspace-title" title={workspace.name}>
                            <Swatch colour={paletteColour(workspace.colour).hex} size={14} /> {workspace.name}
                        </h2>
                        <button type="button" onClick={() => setRenaming(true)} aria-label={`Rename ${workspace.name}`}>
                            Rename
                        </button>
                        <WorkspaceExportButtons workspace={workspace} />
                        <button
                            type="button"
                            className="danger-outline"
                            onClick={() => setConfirmingDelete(true)}
                            aria-label={`Delete ${workspace.name}`}
                        >
                            Delete
                        </button>
                    </>
                )}
            </div>
            <details className="workspace-settings">
                <summary aria-label={`Settings of ${workspace.name}`}>Settings</summary>
                <WorkspaceSettingsForm key={workspace.id} workspace={workspace} />
            </details>
            {confirmingDelete && (
                <ConfirmDialog
                    id="confirm-delete"
                    title={`Delete “${workspace.name}”?`}
                    keepLabel="Keep the workspace"
                    confirmText="Delete"
                    confirmLabel={`Delete ${workspace.name} for good`}
                    onClose={() => setConfirmingDelete(false)}
                    onConfirm={() => {
                        setConfirmingDelete(false);
                        void chat.deleteWorkspace(workspace.id);
                    }}
                >
                    Its chat ({workspace.messages.length} {workspace.messages.length === 1 ? "message" : "messages"}) and settings are
                    deleted, and the engine drops its KV and pages. This cannot be undone.
                </ConfirmDialog>
            )}
        </header>
    );
}
