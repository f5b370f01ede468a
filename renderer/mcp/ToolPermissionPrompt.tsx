import { useState } from "react";
import type { McpPermission, McpToolCallRequest } from "../../contract/mcp.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import "./mcp.css";

const choices: readonly { readonly permission: McpPermission; readonly label: string }[] = [
    { permission: "once", label: "Allow once" },
    { permission: "chat", label: "Allow for this chat" },
    { permission: "always", label: "Always allow this tool" },
    { permission: "deny", label: "Deny" }
];

/** The model asks to run a tool: its server, name and arguments, and the user's answer (answerToolCall). */
export function ToolPermissionPrompt({ requestId, call }: { readonly requestId: string; readonly call: McpToolCallRequest }) {
    const { rpc } = useAppServices();
    const [sent, setSent] = useState(false);
    const [problem, setProblem] = useState<string | undefined>();
    const answer = (permission: McpPermission): void => {
        setSent(true);
        rpc.call("answerToolCall", { requestId, callId: call.callId, permission }).catch((error: unknown) => {
            setSent(false);
            setProblem(toRpcError(error).message);
        });
    };
    return (
        <div className="tool-permission" role="group" aria-label={`Run the tool ${call.tool}?`} data-tool-prompt={call.callId}>
            <p>
                The model wants to run <strong>{call.tool}</strong> of the MCP server <strong>{call.server}</strong> with:
            </p>
            <pre className="tool-call-text">{call.arguments}</pre>
            <div className="tool-permission-actions">
                {choices.map(({ permission, label }) => (
                    <button key={permission} type="button" disabled={sent} onClick={() => answer(permission)}>
                        {label}
                    </button>
                ))}
            </div>
            {problem !== undefined && <p role="alert">{problem}</p>}
        </div>
    );
}
