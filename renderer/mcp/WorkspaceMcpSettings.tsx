import { useWorkspaceStore } from "../stores/workspaceStore.js";
import type { Workspace, WorkspaceSettings } from "../workspaces/Workspace.js";
import { useMcpServers } from "./useMcpServers.js";

/**
 * A workspace's MCP tools: which servers' tools its chat offers the model, and whether the answer
 * must begin with a tool call (then the model answers freely with the result).
 */
export function WorkspaceMcpSettings({ workspace }: { readonly workspace: Workspace }) {
    const { loaded } = useMcpServers();
    const settings = workspace.settings;
    const chosen = settings.mcpServers ?? [];
    const update = (patch: Partial<WorkspaceSettings>): void => useWorkspaceStore.getState().updateSettings(workspace.id, patch);
    const servers = loaded.kind === "ready" ? loaded.view.servers : [];
    const names = [...new Set([...servers.map((server) => server.name), ...chosen])];
    if (names.length === 0) {
        return null;
    }
    return (
        <fieldset className="mcp-workspace-tools">
            <legend>MCP tools</legend>
            {names.map((name) => {
                const server = servers.find((item) => item.name === name);
                return (
                    <label key={name} className="field-check">
                        <input
                            type="checkbox"
                            checked={chosen.includes(name)}
                            onChange={(event) =>
                                update({ mcpServers: event.target.checked ? [...chosen, name] : chosen.filter((item) => item !== name) })
                            }
                        />{" "}
                        Offer the tools of {name}
                        <span className="field-hint">
                            {" "}
                            (
                            {server === undefined
                                ? "not in mcp.json"
                                : server.state === "failed"
                                  ? "failed"
                                  : `${server.tools.length} tools`}
                            )
                        </span>
                    </label>
                );
            })}
            <label className="field-check">
                <input
                    type="checkbox"
                    checked={settings.toolChoice === "required"}
                    onChange={(event) => update({ toolChoice: event.target.checked ? "required" : "auto" })}
                />{" "}
                Begin each answer with a tool call
            </label>
        </fieldset>
    );
}
