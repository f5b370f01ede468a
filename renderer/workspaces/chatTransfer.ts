import { rpcLimits, splitUtf8 } from "../../contract/limits.js";
import { workspaceLimits } from "../../contract/workspaces.js";
import type { KvaultRpc } from "../rpc/KvaultRpc.js";
import { clientErrorCodes, RpcError } from "../rpc/RpcError.js";
import type { WorkspaceStore } from "../stores/workspaceStore.js";
import { newId } from "../util/newId.js";
import type { Workspace } from "./Workspace.js";

/**
 * Import JSON: the file's text goes to the host in parts that each fit one RPC message (as the
 * workspaces document does), the host checks it with the store's own rules and saves it, and
 * the new workspace is shown. A bad file rejects with the host's chat_import_invalid, saying why.
 */
export async function importChatFile(rpc: KvaultRpc, workspaces: WorkspaceStore, text: string): Promise<Workspace> {
    if (text.length > workspaceLimits.maxChatImportChars) {
        throw new RpcError(
            "chat_import_invalid",
            `This file has ${text.length.toLocaleString("en-US")} characters; Kvault imports chats of at most ${workspaceLimits.maxChatImportChars.toLocaleString("en-US")}. Nothing was imported.`
        );
    }
    const parts = splitUtf8(text, rpcLimits.maxImportPartBytes);
    const importId = newId("import-");
    const id = newId("ui-");
    for (const [part, partText] of parts.entries()) {
        const answer = await rpc.call("importChat", { importId, id, part, numParts: parts.length, text: partText });
        if (answer.done) {
            return adopt(workspaces, answer.workspace);
        }
    }
    throw new RpcError(
        clientErrorCodes.badMessage,
        `The host took all ${parts.length} parts of the chat file but did not say it imported it.`
    );
}

/** Duplicate: the host copies the workspace (settings, chat, every branch) as "<name> (copy)", shown at once. */
export async function duplicateWorkspace(rpc: KvaultRpc, workspaces: WorkspaceStore, workspace: Workspace): Promise<Workspace> {
    const name = `${workspace.name.slice(0, workspaceLimits.maxNameChars - 7)} (copy)`;
    const copy = await rpc.call("duplicateWorkspace", { workspace: workspace.id, id: newId("ui-"), name });
    return adopt(workspaces, copy);
}

function adopt(workspaces: WorkspaceStore, workspace: Workspace): Workspace {
    workspaces.getState().adopt(workspace);
    workspaces.getState().select(workspace.id);
    return workspace;
}
