import type { KvaultBridge } from "../contract/KvaultBridge.js";

declare global {
    interface Window {
        /** Exposed by main/preload in the Electron app; absent in a plain browser. */
        readonly kvault?: KvaultBridge;
    }
}
