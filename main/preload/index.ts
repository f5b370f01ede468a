// Runs sandboxed, before the renderer's scripts, in an isolated world. It is bundled to
// CommonJS with contract/ inlined, because a sandboxed preload can require only electron.
import { contextBridge, ipcRenderer } from "electron";
import { channels } from "../../contract/channels";
import type { AppInfo, KvaultBridge } from "../../contract/KvaultBridge";

// Each function forwards only what the contract names, never the renderer's own arguments,
// so the page cannot smuggle anything past the channel's signature.
const bridge: KvaultBridge = {
    getAppInfo: () => ipcRenderer.invoke(channels.getAppInfo) as Promise<AppInfo>
};

contextBridge.exposeInMainWorld("kvault", bridge);
