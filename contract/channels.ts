// IPC channel names shared by main (ipcMain.handle), the preload (ipcRenderer.invoke) and,
// later, the headless host's WebSocket RPC. Prefixed so they cannot collide with channels
// that Electron or a library registers.
export const channels = {
    getAppInfo: "kvault:app:get-info"
} as const;

export type Channel = (typeof channels)[keyof typeof channels];
