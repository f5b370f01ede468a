// IPC channel names shared by main (ipcMain.handle), the preload (ipcRenderer.invoke / on).
// Prefixed so they cannot collide with channels that Electron or a library registers.
import type { RpcMethod } from "./rpc.js";

export const channels = {
    getAppInfo: "kvault:app:get-info",
    getSettings: "kvault:settings:get",
    setLocalApi: "kvault:settings:set-local-api",
    /** main → renderer only: queued/started/text of the turns that renderer started (RpcTurnEvent). */
    turnEvent: "kvault:rpc:turn-event"
} as const;

/** One invoke channel per RPC method of contract/rpc.ts; the headless host carries the same calls over /rpc. */
export const rpcChannels: { readonly [M in RpcMethod]: `kvault:rpc:${M}` } = {
    info: "kvault:rpc:info",
    chat: "kvault:rpc:chat",
    cancel: "kvault:rpc:cancel",
    measure: "kvault:rpc:measure",
    snapshot: "kvault:rpc:snapshot",
    forgetWorkspace: "kvault:rpc:forgetWorkspace",
    audit: "kvault:rpc:audit",
    replayableTurns: "kvault:rpc:replayableTurns",
    replay: "kvault:rpc:replay",
    listDrills: "kvault:rpc:listDrills",
    runDrill: "kvault:rpc:runDrill",
    runCanary: "kvault:rpc:runCanary",
    inspectModel: "kvault:rpc:inspectModel",
    switchModel: "kvault:rpc:switchModel",
    startDownload: "kvault:rpc:startDownload",
    listDownloads: "kvault:rpc:listDownloads",
    cancelDownload: "kvault:rpc:cancelDownload",
    resumeDownload: "kvault:rpc:resumeDownload",
    listModels: "kvault:rpc:listModels",
    forgetModel: "kvault:rpc:forgetModel",
    loadWorkspaces: "kvault:rpc:loadWorkspaces",
    importWorkspaces: "kvault:rpc:importWorkspaces",
    saveWorkspace: "kvault:rpc:saveWorkspace",
    removeWorkspace: "kvault:rpc:removeWorkspace",
    selectWorkspace: "kvault:rpc:selectWorkspace",
    appendMessage: "kvault:rpc:appendMessage",
    dropLastAnswer: "kvault:rpc:dropLastAnswer",
    clearChat: "kvault:rpc:clearChat"
};

export type Channel = (typeof channels)[keyof typeof channels] | (typeof rpcChannels)[RpcMethod];
