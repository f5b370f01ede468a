// The IPC channels between main and the preload: one for every RPC call, one for turn events, one
// for the app's version. Prefixed so they cannot collide with channels that Electron or a library
// registers.

export const ipcChannels = {
    /** renderer → main: `invoke(method, params)` for every method of contract/rpc/rpcSpec.ts; answers with an RpcAnswer. */
    call: "kvault:rpc:call",
    /** main → renderer only: queued/started/text of the turns that renderer started (contract/turnEvents.ts TurnEvent). */
    turnEvent: "kvault:rpc:turn-event",
    getAppInfo: "kvault:app:get-info"
} as const;
