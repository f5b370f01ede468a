// Pure on purpose (electron's types only): the bridge is built from an ipcRenderer handed in,
// so tests check with a fake one that each function sends exactly its contract's fields.
import type { IpcRenderer, IpcRendererEvent } from "electron";
import { channels, rpcChannels } from "../../contract/channels.js";
import type { AppInfo, KvaultBridge, TurnEventListener } from "../../contract/KvaultBridge.js";
import type { RpcTurnEvent } from "../../contract/rpc.js";

/** The three ipcRenderer calls the bridge makes; nothing else of it is reachable from the page. */
export type BridgeIpc = Pick<IpcRenderer, "invoke" | "on" | "removeListener">;

/**
 * The API exposed as `window.kvault`: named functions only. Each forwards only what the contract
 * names, rebuilt from the renderer's arguments, so the page cannot smuggle anything past the
 * channel's signature; main validates every field again. Results are BridgeResults (see
 * contract/KvaultBridge.ts for why failures are values).
 */
export function createBridge(ipc: BridgeIpc): KvaultBridge {
    return {
        getAppInfo: () => ipc.invoke(channels.getAppInfo) as Promise<AppInfo>,

        info: () => ipc.invoke(rpcChannels.info, {}),
        chat: (request) =>
            ipc.invoke(rpcChannels.chat, {
                requestId: request.requestId,
                workspace: request.workspace,
                messages: request.messages,
                sampling: request.sampling
            }),
        cancel: (requestId) => ipc.invoke(rpcChannels.cancel, { requestId }),
        measure: (workspace, messages, draft) => ipc.invoke(rpcChannels.measure, { workspace, messages, draft }),
        snapshot: () => ipc.invoke(rpcChannels.snapshot, {}),
        forgetWorkspace: (workspace) => ipc.invoke(rpcChannels.forgetWorkspace, { workspace }),
        audit: () => ipc.invoke(rpcChannels.audit, {}),
        replayableTurns: () => ipc.invoke(rpcChannels.replayableTurns, {}),
        replay: (requestId) => ipc.invoke(rpcChannels.replay, { requestId }),
        listDrills: () => ipc.invoke(rpcChannels.listDrills, {}),
        runDrill: (id) => ipc.invoke(rpcChannels.runDrill, { id }),
        runCanary: (params) =>
            ipc.invoke(rpcChannels.runCanary, params.fillerTokens === undefined ? {} : { fillerTokens: params.fillerTokens }),
        inspectModel: (path) => ipc.invoke(rpcChannels.inspectModel, { path }),
        switchModel: (model) => ipc.invoke(rpcChannels.switchModel, { model }),
        startDownload: (source) => ipc.invoke(rpcChannels.startDownload, { source }),
        listDownloads: () => ipc.invoke(rpcChannels.listDownloads, {}),
        cancelDownload: (id) => ipc.invoke(rpcChannels.cancelDownload, { id }),
        resumeDownload: (id) => ipc.invoke(rpcChannels.resumeDownload, { id }),
        listModels: () => ipc.invoke(rpcChannels.listModels, {}),
        forgetModel: (id, deleteFile) => ipc.invoke(rpcChannels.forgetModel, { id, deleteFile: deleteFile === true }),
        loadWorkspaces: () => ipc.invoke(rpcChannels.loadWorkspaces, {}),
        importWorkspaces: (document) => ipc.invoke(rpcChannels.importWorkspaces, { document }),
        saveWorkspace: (workspace) =>
            ipc.invoke(rpcChannels.saveWorkspace, {
                workspace: { id: workspace.id, name: workspace.name, colour: workspace.colour, settings: workspace.settings }
            }),
        removeWorkspace: (workspace) => ipc.invoke(rpcChannels.removeWorkspace, { workspace }),
        selectWorkspace: (workspace) => ipc.invoke(rpcChannels.selectWorkspace, { workspace }),
        appendMessage: (workspace, message) =>
            ipc.invoke(rpcChannels.appendMessage, {
                workspace,
                message: { id: message.id, role: message.role, content: message.content, finish: message.finish, usage: message.usage }
            }),
        dropLastAnswer: (workspace, messageId) => ipc.invoke(rpcChannels.dropLastAnswer, { workspace, messageId }),
        clearChat: (workspace) => ipc.invoke(rpcChannels.clearChat, { workspace }),
        onTurnEvent: (listener: TurnEventListener) => {
            if (typeof listener !== "function") {
                throw new TypeError("onTurnEvent takes a function.");
            }
            // The IPC event stays here: it carries a sender handle the page must never get.
            const forward = (_event: IpcRendererEvent, turnEvent: RpcTurnEvent): void => listener(turnEvent);
            ipc.on(channels.turnEvent, forward);
            return () => {
                ipc.removeListener(channels.turnEvent, forward);
            };
        },

        getSettings: () => ipc.invoke(channels.getSettings),
        setLocalApi: (change) => ipc.invoke(channels.setLocalApi, { enabled: change.enabled, port: change.port })
    };
}
