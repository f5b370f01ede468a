import { useTurnStore } from "../stores/turnStore.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { ImportChatButton } from "./ImportChatButton.js";
import { StorageNotices } from "./StorageNotices.js";
import { WorkspaceSearch } from "./WorkspaceSearch.js";
import { Swatch } from "./Swatch.js";
import type { Workspace } from "./Workspace.js";
import { paletteColour } from "./workspacePalette.js";
import "./WorkspaceList.css";

/**
 * Every workspace, with what its turn is doing, so one can watch them all while reading one.
 * Until the host's workspaces are loaded it says so (never an empty list that then fills).
 */
export function WorkspaceList() {
    const load = useWorkspaceStore((state) => state.load);
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const selectedId = useWorkspaceStore((state) => state.selectedId);
    return (
        <nav className="workspace-list" aria-labelledby="workspaces-heading" aria-busy={load.kind === "loading"} data-load={load.kind}>
            <div className="workspace-list-header">
                <h2 id="workspaces-heading">Workspaces</h2>
                <button
                    type="button"
                    className="primary"
                    onClick={() => useWorkspaceStore.getState().create()}
                    aria-label="New workspace"
                    disabled={load.kind !== "ready"}
                >
                    New
                </button>
                <ImportChatButton disabled={load.kind !== "ready"} />
            </div>
            {load.kind === "ready" && <WorkspaceSearch />}
            {load.kind === "loading" ? (
                <p className="placeholder">Loading workspaces…</p>
            ) : load.kind === "failed" ? (
                <p className="inline-error" role="alert">
                    Could not load the workspaces: {load.message}
                </p>
            ) : workspaces.length === 0 ? (
                <p className="placeholder">No workspaces. Make one with New.</p>
            ) : (
                <ul>
                    {workspaces.map((workspace) => (
                        <WorkspaceListItem key={workspace.id} workspace={workspace} selected={workspace.id === selectedId} />
                    ))}
                </ul>
            )}
            <StorageNotices />
        </nav>
    );
}

function WorkspaceListItem({ workspace, selected }: { readonly workspace: Workspace; readonly selected: boolean }) {
    const live = useTurnStore((state) => state.live[workspace.id]);
    const failed = useTurnStore((state) => state.failures[workspace.id] !== undefined);
    const status =
        live !== undefined
            ? live.phase === "queued"
                ? "queued"
                : live.phase === "stopping"
                  ? "stopping"
                  : "answering"
            : failed
              ? "error"
              : undefined;
    return (
        <li>
            <button
                type="button"
                className={selected ? "workspace-item selected" : "workspace-item"}
                aria-current={selected ? "true" : undefined}
                onClick={() => useWorkspaceStore.getState().select(workspace.id)}
                aria-label={`${workspace.name}${status === undefined ? "" : `, ${status}`}`}
                data-workspace-id={workspace.id}
                data-turn-phase={live?.phase ?? "idle"}
                data-streamed-chars={live?.text.length ?? 0}
                data-num-messages={workspace.messages.length}
            >
                <Swatch colour={paletteColour(workspace.colour).hex} />
                <span className="workspace-item-text">
                    {/* Cut short with an ellipsis when long: the whole name is its title, and in the button's label. */}
                    <span className="workspace-item-name" title={workspace.name}>
                        {workspace.name}
                    </span>
                    {status !== undefined && <span className={`workspace-item-status status-${status}`}>{status}</span>}
                </span>
            </button>
        </li>
    );
}
