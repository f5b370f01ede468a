// Runs sandboxed, before the renderer's scripts, in an isolated world. It is bundled to
// CommonJS with contract/ inlined, because a sandboxed preload can require only electron.
import { contextBridge, ipcRenderer } from "electron";
import { createBridge } from "./createBridge.js";

contextBridge.exposeInMainWorld("kvault", createBridge(ipcRenderer));
