// Pure on purpose: this module must not load electron at runtime, so that the hardening
// below is unit-tested without launching a window. Only types come from electron.
import type { BrowserWindowConstructorOptions } from "electron";
import { windowStateDefaults, type Rectangle } from "./windowState.js";

/**
 * Options for the app's one window. `preloadPath` is the absolute path of the built preload;
 * `bounds`, where it opens (placeWindow's choice), else the default size wherever the system puts it.
 * The renderer gets no Node, no Electron and no way to turn either back on; everything it
 * needs goes through the named calls of the preload.
 */
export function windowOptions(preloadPath: string, bounds?: Rectangle): BrowserWindowConstructorOptions {
    return {
        width: windowStateDefaults.width,
        height: windowStateDefaults.height,
        ...bounds,
        minWidth: windowStateDefaults.minWidth,
        minHeight: windowStateDefaults.minHeight,
        title: "Kvault",
        // Shown on ready-to-show, so the user never sees an unstyled flash.
        show: false,
        webPreferences: {
            preload: preloadPath,
            contextIsolation: true,
            sandbox: true,
            nodeIntegration: false,
            nodeIntegrationInWorker: false,
            nodeIntegrationInSubFrames: false,
            webSecurity: true,
            allowRunningInsecureContent: false,
            webviewTag: false,
            experimentalFeatures: false,
            navigateOnDragDrop: false,
            safeDialogs: true,
            // Chromium's spellchecker downloads dictionaries from Google; a local-only app
            // should make no network request the user did not ask for.
            spellcheck: false
        }
    };
}

/**
 * Whether `url` is a page of this app, given the URL the window was loaded from.
 * A dev server (http/https) is the app for its whole origin; a built app (file:) is only its
 * own index.html, whatever the query or hash, because every file on disk shares one file:
 * origin. Anything unparsable, or of another scheme (javascript:, data:, about:), is not.
 * Used both to allow navigation and to trust the sender of an IPC call.
 */
export function isAllowedNavigation(url: string, appUrl: string): boolean {
    const target = parseUrl(url);
    const app = parseUrl(appUrl);
    if (target === undefined || app === undefined || target.protocol !== app.protocol) {
        return false;
    }
    switch (app.protocol) {
        case "http:":
        case "https:":
            return target.origin === app.origin;
        case "file:":
            return target.host === app.host && target.pathname === app.pathname;
        default:
            return false;
    }
}

function parseUrl(url: string): URL | undefined {
    try {
        return new URL(url);
    } catch {
        return undefined;
    }
}
