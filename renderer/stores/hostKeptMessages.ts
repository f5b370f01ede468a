import type { StoredMessage } from "../../contract/workspaces.js";

/**
 * Messages the host already keeps on disk when the page learns of them: a chat's answer, which
 * the host appends itself when its turn ends (host/rpc/HostTurns.ts). The page adds them to its
 * workspace store as a mirror, and WorkspaceSync must not send them back. By id, since the store
 * keeps a copy that names the parent (contract/chatBranches.ts); WorkspaceSync takes each id once
 * it has seen the message, so at most the answers not yet seen are held.
 */
const keptByHost = new Set<string>();

/** `message`, marked as the host's already. */
export function keptByHostMessage(message: StoredMessage): StoredMessage {
    keptByHost.add(message.id);
    return message;
}

/** Whether `message` is one the host kept itself; forgets it (each is added to the store once). */
export function takeKeptByHost(message: StoredMessage): boolean {
    return keptByHost.delete(message.id);
}
