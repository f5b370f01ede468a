import { app, ipcMain } from "electron";
import { channels } from "../../contract/channels";
import type { AppInfo } from "../../contract/KvaultBridge";
import { assertTrustedSender } from "./assertTrustedSender";

/** Registers the host side of every call in contract/; once per app run. */
export function registerIpcHandlers(appUrl: string): void {
    ipcMain.handle(channels.getAppInfo, (event, ...args: unknown[]): AppInfo => {
        assertTrustedSender(event, appUrl, args, 0);
        return { version: app.getVersion(), platform: process.platform };
    });
}
