import { useMcpServers } from "./useMcpServers.js";
import "./mcp.css";

/** Settings › MCP servers: each server of mcp.json with its state (connected, or failed with why) and its tools. */
export function McpServersSection() {
    const { loaded, reload } = useMcpServers();
    return (
        <section className="settings-section" aria-labelledby="mcp-heading">
            <h3 id="mcp-heading">MCP servers</h3>
            {loaded.kind === "loading" && <p className="placeholder">Reading the MCP servers…</p>}
            {loaded.kind === "failed" && <p role="alert">{loaded.message}</p>}
            {loaded.kind === "ready" && (
                <>
                    <p className="settings-help">
                        Tool servers come from <code>{loaded.view.configPath || "mcp.json in the data directory"}</code> (the format LM
                        Studio and Cursor use), read when Kvault starts; a workspace picks whose tools its chat offers.
                    </p>
                    {loaded.view.configError !== undefined && <p role="alert">{loaded.view.configError.message}</p>}
                    {loaded.view.servers.length === 0 ? (
                        <p className="placeholder">No MCP servers are configured.</p>
                    ) : (
                        <ul className="mcp-servers" aria-label="MCP servers">
                            {loaded.view.servers.map((server) => (
                                <li key={server.name} data-mcp-server={server.name} data-mcp-state={server.state}>
                                    <strong>{server.name}</strong>{" "}
                                    <span className="settings-help">
                                        ({server.transport}: {server.target})
                                    </span>{" "}
                                    <span className="mcp-server-state">{server.state}</span>
                                    {server.error !== undefined && (
                                        <p className="inline-error" data-mcp-error={server.error.code}>
                                            {server.error.message}
                                        </p>
                                    )}
                                    {server.tools.length > 0 && (
                                        <ul className="mcp-server-tools" aria-label={`Tools of ${server.name}`}>
                                            {server.tools.map((tool) => (
                                                <li key={tool.name} data-mcp-tool={tool.name}>
                                                    <code>{tool.name}</code>
                                                    {tool.description === undefined ? "" : `: ${tool.description}`}
                                                </li>
                                            ))}
                                        </ul>
                                    )}
                                </li>
                            ))}
                        </ul>
                    )}
                    <button type="button" onClick={reload} aria-label="Refresh the MCP servers">
                        Refresh
                    </button>
                </>
            )}
        </section>
    );
}
