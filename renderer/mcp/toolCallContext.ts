import type { StoredMessage } from "../workspaces/Workspace.js";

/**
 * An answer's text as later turns and the meter see it: its tool calls' results (or errors) first,
 * each as one line the model can read, then its text. The stored message keeps them apart.
 */
export function withToolCalls(message: Pick<StoredMessage, "content" | "toolCalls">): string {
    const calls = message.toolCalls ?? [];
    if (calls.length === 0) {
        return message.content;
    }
    const lines = calls.map((call) =>
        call.error === undefined
            ? `[Tool ${call.tool} of ${call.server}, arguments ${call.arguments}, returned: ${call.result ?? ""}]`
            : `[Tool ${call.tool} of ${call.server}, arguments ${call.arguments}, failed (${call.error.code}): ${call.error.message}]`
    );
    return `${lines.join("\n")}\n\n${message.content}`;
}
