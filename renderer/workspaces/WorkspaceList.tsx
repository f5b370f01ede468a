import { useTurnStore } from "../stores/turnStore";
import { useWorkspaceStore } from "../stores/workspaceStore";
import { Swatch } from "./Swatch";
import type { Workspace } from "./Workspace";
import { paletteColour } from "./workspacePalette";
import "./WorkspaceList.css";

/** Every workspace, with what its turn is doing, so one can watch them all while reading one. */
export function WorkspaceList() {
    const workspaces = useWorkspaceStore((state) => state.workspaces);
    const selectedId = useWorkspaceStore((state) => state.selectedId);
    return (
        <nav className="workspace-list" aria-labelledby="workspaces-heading">
            <div className="workspace-list-header">
                <h2 id="workspaces-heading">Workspaces</h2>
                <button type="button" className="primary" onClick={() => useWorkspaceStore.getState().create()} aria-label="New workspace">New</button>
            </div>
            {workspaces.length === 0
                ? <p className="placeholder">No workspaces. Make one with New.</p>
                : <ul>{workspaces.map((workspace) => <WorkspaceListItem key={workspace.id} workspace={workspace} selected={workspace.id === selectedId} />)}</ul>}
        </nav>
    );
}

function WorkspaceListItem({ workspace, selected }: { readonly workspace: Workspace; readonly selected: boolean }) {
    const live = useTurnStore((state) => state.live[workspace.id]);
    const failed = useTurnStore((state) => state.failures[workspace.id] !== undefined);
    const status = live !== undefined
        ? live.phase === "queued" ? "queued" : live.phase === "stopping" ? "stopping" : "answering"
        : failed ? "error" : undefined;
    return (
        <li>
            <button type="button" className={selected ? "workspace-item selected" : "workspace-item"} aria-current={selected ? "true" : undefined}
                onClick={() => useWorkspaceStore.getState().select(workspace.id)}
                aria-label={`${workspace.name}${status === undefined ? "" : `, ${status}`}`}
                data-workspace-id={workspace.id} data-turn-phase={live?.phase ?? "idle"} data-streamed-chars={live?.text.length ?? 0}
                data-num-messages={workspace.messages.length}>
                <Swatch colour={paletteColour(workspace.colour).hex} />
                <span className="workspace-item-text">
                    <span className="workspace-item-name">{workspace.name}</span>
                    {status !== undefined && <span className={`workspace-item-status status-${status}`}>{status}</span>}
                </span>
            </button>
        </li>
    );
}
