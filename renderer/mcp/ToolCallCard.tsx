import type { McpToolCallOutcome } from "../../contract/mcp.js";
import { formatCount } from "../util/formatCount.js";
import "./mcp.css";

/** A tool call's outcome in the chat, collapsed: its tool and size or error in the summary, its arguments and result inside. */
export function ToolCallCard({ outcome }: { readonly outcome: McpToolCallOutcome }) {
    const failed = outcome.error !== undefined;
    return (
        <details
            className={`tool-call-card${failed ? " tool-call-failed" : ""}`}
            data-tool-call={outcome.callId}
            data-tool-error={outcome.error?.code}
        >
            <summary>
                <span className="tool-call-name">
                    {outcome.tool} <span className="tool-call-server">({outcome.server})</span>
                </span>{" "}
                {failed ? (
                    <span className="tool-call-status" role="status">
                        failed: <code>{outcome.error!.code}</code>
                    </span>
                ) : (
                    <span className="tool-call-status" data-tool-tokens={outcome.numTokens}>
                        result: {formatCount(outcome.numTokens ?? 0)} tokens, counted on the meter
                    </span>
                )}
            </summary>
            <p className="tool-call-label">Arguments</p>
            <pre className="tool-call-text">{outcome.arguments}</pre>
            <p className="tool-call-label">{failed ? "Error" : "Result"}</p>
            <pre className="tool-call-text" data-tool-result>
                {failed ? outcome.error!.message : outcome.result}
            </pre>
        </details>
    );
}

/** An answer's tool calls, each a collapsed card, above its text. */
export function ToolCallCards({ calls }: { readonly calls: readonly McpToolCallOutcome[] | undefined }) {
    if (calls === undefined || calls.length === 0) {
        return null;
    }
    return (
        <div className="tool-call-cards">
            {calls.map((outcome) => (
                <ToolCallCard key={outcome.callId} outcome={outcome} />
            ))}
        </div>
    );
}
