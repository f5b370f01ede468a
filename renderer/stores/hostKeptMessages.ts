import type { StoredMessage } from "../../contract/workspaces.js";

/**
 * Messages the host already keeps on disk when the page learns of them: a chat's answer, which
 * the host appends itself when its turn ends (host/rpc/HostTurns.ts). The page adds them to its
 * workspace store as a mirror, and WorkspaceSync must not send them back. By object identity, so
 * nothing is kept once the message is gone from the store.
 */
const keptByHost = new WeakSet<StoredMessage>();

/** `message`, marked as the host's already; add this very object to the store. */
export function keptByHostMessage(message: StoredMessage): StoredMessage {
    keptByHost.add(message);
    return message;
}

export function isKeptByHost(message: StoredMessage): boolean {
    return keptByHost.has(message);
}
