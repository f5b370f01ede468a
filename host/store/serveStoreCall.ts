import type { StoreCall } from "./parseStoreCall.js";
import { StoreOpenError } from "./storeErrors.js";
import type { WorkspaceStore } from "./WorkspaceStore.js";

/** Runs a checked store call (parseStoreCall) on `store`; the answer is the method's result in contract/rpc.ts. */
export async function serveStoreCall(store: WorkspaceStore, call: StoreCall): Promise<unknown> {
    switch (call.method) {
        case "loadWorkspaces":
            return store.load();
        case "importWorkspaces":
            return store.importV1(call.params.document);
        case "saveWorkspace":
            await store.saveWorkspace(call.params.workspace);
            return {};
        case "removeWorkspace":
            await store.removeWorkspace(call.params.workspace);
            return {};
        case "selectWorkspace":
            await store.selectWorkspace(call.params.workspace);
            return {};
        case "appendMessage":
            await store.appendMessage(call.params.workspace, call.params.message);
            return {};
        case "dropLastAnswer":
            return store.dropLastAnswer(call.params.workspace, call.params.messageId);
        case "clearChat":
            await store.clearChat(call.params.workspace);
            return {};
    }
}

/** The store of a host that keeps no chats (a test's server): every store call fails with store_unavailable. */
export function noWorkspaceStore(): Promise<WorkspaceStore> {
    return Promise.reject(new StoreOpenError("This Kvault host keeps no workspaces: it was started without a data folder."));
}
