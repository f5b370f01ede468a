import { BrowserWindow } from "electron";
import type { WindowState } from "./windowState.js";
import { isAllowedNavigation, windowOptions } from "./windowOptions.js";

export interface MainWindowOptions {
    /** Where it opens, and whether maximized or full screen (placeWindow's choice). */
    readonly placement?: WindowState;
    /** A link the page tried to follow out of the app (a click, or window.open); the window itself never leaves. */
    readonly onExternalLink?: (url: string) => void;
}

/**
 * Opens the app window on `appUrl` and keeps it there: navigation and redirects away from the
 * app are cancelled (a link out goes to `onExternalLink`, which asks before opening the browser),
 * new windows and <webview> are refused.
 */
export function createMainWindow(appUrl: string, preloadPath: string, options: MainWindowOptions = {}): BrowserWindow {
    const window = new BrowserWindow(windowOptions(preloadPath, options.placement?.bounds));
    const { webContents } = window;

    webContents.on("will-navigate", (event, url) => {
        if (!isAllowedNavigation(url, appUrl)) {
            event.preventDefault();
            options.onExternalLink?.(url);
        }
    });
    webContents.on("will-redirect", (event, url) => {
        if (!isAllowedNavigation(url, appUrl)) {
            event.preventDefault();
        }
    });
    webContents.setWindowOpenHandler(({ url }) => {
        options.onExternalLink?.(url);
        return { action: "deny" };
    });
    webContents.on("will-attach-webview", (event) => event.preventDefault());

    window.once("ready-to-show", () => {
        // maximize() shows the window too; before ready-to-show it would flash an empty page.
        if (options.placement?.maximized === true) {
            window.maximize();
        } else {
            window.show();
        }
        if (options.placement?.fullScreen === true) {
            window.setFullScreen(true);
        }
    });
    void window.loadURL(appUrl);
    return window;
}
