import type { ChatMessage } from "../../contract/engineProtocol.js";
import { withToolCalls } from "../mcp/toolCallContext.js";
import type { Workspace } from "../workspaces/Workspace.js";

/** What a turn sends: the system prompt when there is one, then the whole chat. */
export function conversationMessages(workspace: Workspace): ChatMessage[] {
    const messages: ChatMessage[] = workspace.messages.map((message) => ({ role: message.role, content: withToolCalls(message) }));
    return workspace.settings.systemPrompt.trim() === ""
        ? messages
        : [{ role: "system", content: workspace.settings.systemPrompt }, ...messages];
}

/**
 * Changes exactly when conversationMessages does (messages are never edited in place, so their
 * ids stand for their content): a measurement made against one key is stale under another.
 */
export function conversationKey(workspace: Workspace): string {
    return `${workspace.settings.systemPrompt}\u0000${workspace.messages.map((message) => message.id).join(",")}`;
}
