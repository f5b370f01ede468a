// Checks of the MCP records a chat keeps (a tool call's outcome) and a workspace's choice of
// servers, shared by the store's schemas (contract/rpc/storeSchemas.ts) and their tests.
import { mcpLimits, type McpToolCallOutcome } from "./mcp.js";
import { turnLimits } from "./limits.js";

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** A list of mcp.json server names within mcpLimits, none twice. */
export function isMcpServerList(value: unknown): value is readonly string[] {
    return (
        Array.isArray(value) &&
        value.length <= mcpLimits.maxWorkspaceServers &&
        value.every((name) => typeof name === "string" && NAME.test(name)) &&
        new Set(value).size === value.length
    );
}

/** One kept tool call: its names, its arguments' text, and a result with its tokens or an error with its code. */
export function isMcpToolCallOutcome(value: unknown): value is McpToolCallOutcome {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return false;
    }
    const call = value as Record<string, unknown>;
    const names = [call.callId, call.server, call.tool].every((name) => typeof name === "string" && name.length > 0 && name.length <= 128);
    const error = call.error as Record<string, unknown> | undefined;
    return (
        names &&
        isText(call.arguments) &&
        (call.result === undefined || isText(call.result)) &&
        (call.numTokens === undefined ||
            (typeof call.numTokens === "number" && Number.isSafeInteger(call.numTokens) && call.numTokens >= 0)) &&
        (error === undefined || (typeof error === "object" && error !== null && isText(error.code) && isText(error.message)))
    );
}

function isText(value: unknown): value is string {
    return typeof value === "string" && value.length <= turnLimits.maxMessageChars;
}
