// MCP tool servers as the renderer sees them (host/mcp/): each server of the data directory's
// mcp.json with its state and tools, a tool call awaiting the user's permission, and its outcome.

/** A tool a server offers, as its tools/list names it. */
export interface McpToolView {
    readonly name: string;
    readonly description?: string;
}

/** One server of mcp.json: connected with its tools, or failed with why (its error's code and message). */
export interface McpServerView {
    readonly name: string;
    /** "stdio" runs `command`; "http" speaks streamable HTTP to `url`. */
    readonly transport: "stdio" | "http";
    /** The command line or the URL, as the settings list shows it. */
    readonly target: string;
    readonly state: "connecting" | "connected" | "failed";
    readonly tools: readonly McpToolView[];
    /** Why it failed: a stable code and what to do. */
    readonly error?: { readonly code: string; readonly message: string };
}

/** What listMcpServers answers: the servers in mcp.json's order, and why the file itself could not be read, if so. */
export interface McpServersView {
    /** The file the servers come from (in the data directory). */
    readonly configPath: string;
    readonly servers: readonly McpServerView[];
    readonly configError?: { readonly code: string; readonly message: string };
}

/** A tool call of the model's, shown to the user before it runs. */
export interface McpToolCallRequest {
    readonly callId: string;
    readonly server: string;
    readonly tool: string;
    /** The arguments as JSON text, as the model wrote them. */
    readonly arguments: string;
}

/** The user's answer to a tool call: run it this once, for the rest of this chat, always (this tool of this server), or not at all. */
export type McpPermission = "once" | "chat" | "always" | "deny";

export const mcpPermissions: readonly McpPermission[] = ["once", "chat", "always", "deny"];

/** How a tool call ended: its result text and its size in tokens, or a named error (the turn goes on with it either way). */
export interface McpToolCallOutcome extends McpToolCallRequest {
    readonly result?: string;
    /** The result's tokens, counted on the meter before it went back to the model. */
    readonly numTokens?: number;
    readonly error?: { readonly code: string; readonly message: string };
}

/** Limits of what a workspace's settings and a chat keep of MCP. */
export const mcpLimits = Object.freeze({
    /** Servers a workspace may offer tools of. */
    maxWorkspaceServers: 64,
    /** Tool calls kept with one answer (a turn runs at most maxToolRounds rounds of one call). */
    maxToolRounds: 4,
    /** Characters of a server's, a tool's or a call id's name. */
    maxNameChars: 64
});

/** What a turn with MCP tools tells its followers: a call awaiting the user's permission, then its outcome. */
export type McpTurnEvent =
    | { readonly kind: "call"; readonly call: McpToolCallRequest }
    | { readonly kind: "outcome"; readonly outcome: McpToolCallOutcome };
