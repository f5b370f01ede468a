// The named errors of MCP tool servers and their calls: each ends one call (or marks one server
// failed) with a stable code, while the chat and the host go on.
import { KvaultError } from "../../engine/index.js";

/** mcp.json cannot be read as the format LM Studio and Cursor use. */
export class McpConfigInvalidError extends KvaultError {
    readonly code = "mcp_config_invalid";
}

/** The server could not be started or reached, or did not finish MCP's handshake. */
export class McpServerUnavailableError extends KvaultError {
    readonly code = "mcp_server_unavailable";
}

/** The server's process exited, or its connection closed, while a call waited for its answer. */
export class McpServerCrashedError extends KvaultError {
    readonly code = "mcp_server_crashed";
}

/** The tool did not answer within the server's timeout; the call was cancelled. */
export class McpToolTimeoutError extends KvaultError {
    readonly code = "mcp_tool_timeout";
}

/** The server wrote something that is not MCP's JSON-RPC while a call waited; the connection was closed. */
export class McpMalformedReplyError extends KvaultError {
    readonly code = "mcp_malformed_reply";
}

/** The model named a server or tool that the workspace does not offer. */
export class McpToolUnknownError extends KvaultError {
    readonly code = "mcp_tool_unknown";
}

/** The user did not allow the call. */
export class McpToolDeniedError extends KvaultError {
    readonly code = "mcp_tool_denied";
}

/** The tool's result does not fit the workspace's window; it is refused whole, never cut. */
export class McpResultTooLargeError extends KvaultError {
    readonly code = "mcp_result_too_large";
}

/** The server answered the call with an error of its own (isError, or a JSON-RPC error). */
export class McpToolFailedError extends KvaultError {
    readonly code = "mcp_tool_failed";
}
