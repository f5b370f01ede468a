import { rpcLimits, splitUtf8 } from "../../contract/limits.js";
import type { LoadedWorkspaces, StoredMessage, WorkspaceMeta } from "../../contract/workspaces.js";
import type { KvaultRpc, PlainRpcMethod } from "../rpc/KvaultRpc.js";
import { clientErrorCodes, RpcError, toRpcError } from "../rpc/RpcError.js";
import { newId } from "../util/newId.js";
import type { RpcMethods } from "../../contract/rpc.js";
import { takeKeptByHost } from "../stores/hostKeptMessages.js";
import type { StorageNoticeStore } from "../stores/storageNoticeStore.js";
import { isSavedByHost, type WorkspaceState, type WorkspaceStore } from "../stores/workspaceStore.js";
import { ChatBranches, chatBranches, type BranchedChat } from "../../contract/chatBranches.js";
import type { Workspace } from "./Workspace.js";

/** The localStorage key where the renderer kept its workspaces before the host did (format 1). */
export const LEGACY_WORKSPACES_KEY = "kvault.workspaces";
/** Where that document moves once the host has taken it over: kept, never read again. */
export const IMPORTED_WORKSPACES_KEY = "kvault.workspaces.imported";

/** The page's old workspaces document, if any, and a way to set it aside once handed over. */
export interface LegacyWorkspaces {
    read(): string | null;
    archive(): void;
}

export interface WorkspaceSyncStores {
    readonly workspaces: WorkspaceStore;
    readonly notices: StorageNoticeStore;
}

/**
 * Keeps the workspace store a mirror of the host's: loads it once the RPC is open (handing over
 * the page's old localStorage workspaces on the first start after an upgrade), then sends every
 * change made in the store to the host, in order. The store changes at once (optimistic); a save
 * the host refuses or cannot make becomes a notice, never silence.
 */
export class WorkspaceSync {
    #loading = false;
    #loaded = false;
    #unsubscribeStore: (() => void) | undefined;
    readonly #unsubscribeStatus: () => void;

    constructor(
        private readonly rpc: KvaultRpc,
        private readonly stores: WorkspaceSyncStores,
        private readonly legacy: LegacyWorkspaces = pageLegacyWorkspaces()
    ) {
        // A load that failed or never ran (no connection yet) is tried again whenever the connection opens.
        this.#unsubscribeStatus = rpc.onStatus((status) => {
            if (status.kind === "open") {
                void this.load();
            }
        });
        if (rpc.status.kind === "open") {
            void this.load();
        }
    }

    /** Loads the host's workspaces into the store, once; later calls do nothing. */
    async load(): Promise<void> {
        if (this.#loading || this.#loaded) {
            return;
        }
        this.#loading = true;
        try {
            let loaded = await this.rpc.call("loadWorkspaces", {});
            const legacyDocument = loaded.workspaces.length === 0 ? this.legacy.read() : null;
            if (legacyDocument !== null) {
                loaded = await this.#import(legacyDocument);
                this.legacy.archive();
            }
            this.#loaded = true;
            this.stores.notices.getState().setProblems(loaded.problems);
            this.stores.workspaces.getState().hydrate(loaded.workspaces, loaded.selectedId);
            this.#unsubscribeStore = this.stores.workspaces.subscribe((state, previous) => this.#write(state, previous));
            if (loaded.workspaces.length === 0) {
                this.stores.workspaces.getState().create();
            }
        } catch (error) {
            const failure = toRpcError(error);
            // Without a connection the list keeps saying it is loading; the next open tries again.
            if (failure.code !== clientErrorCodes.notConnected && failure.code !== clientErrorCodes.connectionLost) {
                this.stores.workspaces.getState().loadFailed(failure.message);
            }
        } finally {
            this.#loading = false;
        }
    }

    /** Hands the old document over in parts that each fit one RPC message, in order; the last part's answer is the host's workspaces. */
    async #import(document: string): Promise<LoadedWorkspaces> {
        const parts = splitUtf8(document, rpcLimits.maxImportPartBytes);
        const importId = newId("import-");
        for (const [part, text] of parts.entries()) {
            const answer = await this.rpc.call("importWorkspaces", { importId, part, numParts: parts.length, text });
            if (answer.done) {
                return answer;
            }
        }
        throw new RpcError(
            clientErrorCodes.badMessage,
            `The host took all ${parts.length} parts of the old workspaces but did not say it imported them.`
        );
    }

    dispose(): void {
        this.#unsubscribeStatus();
        this.#unsubscribeStore?.();
    }

    /** One store change as the host's calls: removals, then creations and edits, then the selection. */
    #write(state: WorkspaceState, previous: WorkspaceState): void {
        if (state.workspaces !== previous.workspaces) {
            const before = new Map(previous.workspaces.map((workspace) => [workspace.id, workspace]));
            const after = new Set(state.workspaces.map((workspace) => workspace.id));
            for (const workspace of previous.workspaces) {
                if (!after.has(workspace.id)) {
                    this.#send("removeWorkspace", { workspace: workspace.id });
                }
            }
            for (const workspace of state.workspaces) {
                const old = before.get(workspace.id);
                if (old === workspace || (old === undefined && isSavedByHost(workspace))) {
                    continue;
                }
                if (old === undefined || !sameMeta(old, workspace)) {
                    this.#send("saveWorkspace", { workspace: metaOf(workspace) });
                }
                this.#writeMessages(workspace, old);
            }
        }
        if (state.selectedId !== previous.selectedId && state.selectedId !== undefined) {
            this.#send("selectWorkspace", { workspace: state.selectedId });
        }
    }

    /**
     * A chat's change as the host's calls: clearing it, or its new messages (each naming its
     * parent), its deleted ones, and a branch switch. The host applies them with the same rules
     * (contract/chatBranches.ts), so the calls are replayed here first: a change they would not
     * reproduce is a bug here, said as a notice and not saved. An answer the host kept is replayed
     * but not sent.
     */
    #writeMessages(workspace: Workspace, before: Workspace | undefined): void {
        const was = { messages: before?.messages ?? [], branches: before?.branches ?? [] };
        if (was.messages === workspace.messages && was.branches === (workspace.branches ?? [])) {
            return;
        }
        const now = chatBranches(workspace).toChat();
        if (now.messages.length === 0 && now.branches.length === 0) {
            if (was.messages.length > 0 || was.branches.length > 0) {
                this.#send("clearChat", { workspace: workspace.id });
            }
            return;
        }
        const replay = new ChatBranches(was);
        const calls: (() => void)[] = [];
        const nowIds = new Set([...now.messages, ...now.branches].map((message) => message.id));
        for (const message of [...was.messages, ...was.branches]) {
            if (!nowIds.has(message.id)) {
                replay.delete(message.id);
                calls.push(() => this.#send("deleteMessage", { workspace: workspace.id, messageId: message.id }));
            }
        }
        for (const [index, message] of now.messages.entries()) {
            if (!replay.has(message.id)) {
                const sent: StoredMessage = { ...message, parent: now.messages[index - 1]?.id ?? null };
                replay.append(sent);
                if (!takeKeptByHost(message)) {
                    // An answer the host kept itself (its turn's) is only mirrored here.
                    calls.push(() => this.#send("appendMessage", { workspace: workspace.id, message: sent }));
                }
            }
        }
        const pathOf = (chat: BranchedChat): string => chat.messages.map((message) => message.id).join(",");
        const leaf = now.messages.at(-1);
        if (pathOf(replay.toChat()) !== pathOf(now) && leaf !== undefined) {
            replay.select(leaf.id);
            calls.push(() => this.#send("selectBranch", { workspace: workspace.id, messageId: leaf.id }));
        }
        if (pathOf(replay.toChat()) !== pathOf(now) || replay.size !== nowIds.size) {
            this.stores.notices
                .getState()
                .saveFailed(
                    `Kvault could not tell how the chat of “${workspace.name}” changed, so the change was not saved. Reload to see what is saved.`
                );
            return;
        }
        for (const call of calls) {
            call();
        }
    }

    #send<M extends PlainRpcMethod>(method: M, params: RpcMethods[M]["params"]): void {
        this.rpc.call(method, params).catch((error: unknown) => this.stores.notices.getState().saveFailed(toRpcError(error).message));
    }
}

function metaOf({ id, name, colour, settings, backend, localModel }: Workspace): WorkspaceMeta {
    return {
        id,
        name,
        colour,
        settings,
        ...(backend === undefined ? {} : { backend }),
        ...(localModel === undefined ? {} : { localModel })
    };
}

function sameMeta(a: Workspace, b: Workspace): boolean {
    return (
        a.name === b.name &&
        a.colour === b.colour &&
        a.backend?.name === b.backend?.name &&
        a.backend?.model === b.backend?.model &&
        a.localModel === b.localModel &&
        (a.settings === b.settings || JSON.stringify(a.settings) === JSON.stringify(b.settings))
    );
}

/** The page's localStorage, where it has one (blocked storage means nothing to hand over). */
export function pageLegacyWorkspaces(): LegacyWorkspaces {
    const storage = (): Storage | undefined => {
        try {
            return typeof localStorage === "undefined" ? undefined : localStorage;
        } catch {
            return undefined;
        }
    };
    return {
        read: () => storage()?.getItem(LEGACY_WORKSPACES_KEY) ?? null,
        archive: () => {
            const store = storage();
            const document = store?.getItem(LEGACY_WORKSPACES_KEY);
            if (store === undefined || document === null || document === undefined) {
                return;
            }
            store.setItem(IMPORTED_WORKSPACES_KEY, document);
            store.removeItem(LEGACY_WORKSPACES_KEY);
        }
    };
}
