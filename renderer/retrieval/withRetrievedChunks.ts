import { composeMessage } from "../../contract/attachments.js";
import { chunkBlock, retrievalLimits } from "../../contract/retrieval.js";
import { conversationMessages } from "../chat/conversationMessages.js";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import type { Workspace } from "../workspaces/Workspace.js";

/**
 * The message to send: with this workspace's nearest chunks in front when its index holds files,
 * as many of the best ones as fit the window beside the chat (whole chunks, never cut); the blocks
 * and what was typed as they are otherwise. Retrieval that fails sends the message without chunks.
 */
export async function withRetrievedChunks(rpc: KvaultRpc, workspace: Workspace, blocks: readonly string[], typed: string): Promise<string> {
    const plain = composeMessage(blocks, typed);
    try {
        const chunks = await rpc.call("retrieveChunks", {
            workspace: workspace.id,
            query: typed,
            maxChunks: retrievalLimits.maxChunksPerQuestion
        });
        for (let count = chunks.length; count > 0; count--) {
            const message = composeMessage([...chunks.slice(0, count).map(chunkBlock), ...blocks], typed);
            const measured = await rpc.call("measure", {
                workspace: workspace.id,
                messages: conversationMessages(workspace),
                draft: message
            });
            if (measured.remainingTokens >= workspace.settings.maxTokens) {
                return message;
            }
        }
    } catch {
        // the message goes as typed: retrieval adds context, and its failure must not lose the question
    }
    return plain;
}
