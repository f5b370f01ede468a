// The Electron host: one hardened window, the IPC handlers, nothing else. The pieces live in
// main/window and main/ipc so that they can be read, and the pure ones tested, alone.
import { app, BrowserWindow, session } from "electron";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { registerIpcHandlers } from "./ipc/registerIpcHandlers";
import { contentSecurityPolicy } from "./window/contentSecurityPolicy";
import { createMainWindow } from "./window/createMainWindow";
import { hardenSession } from "./window/hardenSession";

// electron-vite dev sets ELECTRON_RENDERER_URL; a packaged app ignores it, so nobody can
// point an installed Kvault at another page through the environment.
const devServerUrl = app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL;
const appUrl = devServerUrl ?? pathToFileURL(join(import.meta.dirname, "../renderer/index.html")).href;
const preloadPath = join(import.meta.dirname, "../preload/index.cjs");

let mainWindow: BrowserWindow | undefined;

function openMainWindow(): void {
    mainWindow = createMainWindow(appUrl, preloadPath);
    mainWindow.on("closed", () => {
        mainWindow = undefined;
    });
}

// Sandbox every renderer, including any a future feature opens, not only the main window.
app.enableSandbox();

if (!app.requestSingleInstanceLock()) {
    app.quit();
} else {
    app.on("second-instance", () => {
        if (mainWindow === undefined) {
            return;
        }
        if (mainWindow.isMinimized()) {
            mainWindow.restore();
        }
        mainWindow.focus();
    });

    app.on("window-all-closed", () => {
        // macOS apps stay in the dock until the user quits them.
        if (process.platform !== "darwin") {
            app.quit();
        }
    });

    void app.whenReady().then(() => {
        hardenSession(session.defaultSession, contentSecurityPolicy(devServerUrl === undefined ? "production" : "development"));
        registerIpcHandlers(appUrl);
        openMainWindow();

        // Registered after ready: macOS re-opens the window from the dock, and a window
        // cannot be created before ready.
        app.on("activate", () => {
            if (BrowserWindow.getAllWindows().length === 0) {
                openMainWindow();
            }
        });
    });
}
