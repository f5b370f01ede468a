import { BrowserWindow } from "electron";
import { isAllowedNavigation, windowOptions } from "./windowOptions.js";

/**
 * Opens the app window on `appUrl` and keeps it there: navigation and redirects away from
 * the app are cancelled, new windows and <webview> are refused.
 */
export function createMainWindow(appUrl: string, preloadPath: string): BrowserWindow {
    const window = new BrowserWindow(windowOptions(preloadPath));
    const { webContents } = window;

    webContents.on("will-navigate", (event, url) => {
        if (!isAllowedNavigation(url, appUrl)) {
            event.preventDefault();
        }
    });
    webContents.on("will-redirect", (event, url) => {
        if (!isAllowedNavigation(url, appUrl)) {
            event.preventDefault();
        }
    });
    webContents.setWindowOpenHandler(() => ({ action: "deny" }));
    webContents.on("will-attach-webview", (event) => event.preventDefault());

    window.once("ready-to-show", () => window.show());
    void window.loadURL(appUrl);
    return window;
}
