// Pure on purpose (electron's types only): the application menu as a template, so its items,
// roles and shortcuts are unit-tested; main/index.ts builds it with Menu.buildFromTemplate.
import type { MenuItemConstructorOptions } from "electron";
import { MAX_WORKSPACE_SHORTCUT, type AppCommand } from "../../contract/appCommands.js";

/** What the menu's own items do; roles (copy, zoom, quit, …) are Electron's. */
export interface AppMenuActions {
    /** Sends a command to the focused window's renderer (contract/appCommands.ts). */
    send(command: AppCommand): void;
    /** File › Open Model…: the native file dialog, then `openModelFile` to the renderer. */
    openModel(): void;
    /** View › Dark Mode: light ⇄ dark over whatever the system uses. */
    toggleDarkMode(): void;
    /** Help › Check for Updates… */
    checkForUpdates(): void;
    /** Help › Kvault on GitHub, Report a Problem: through the same confirmation as a link in a chat. */
    openExternal(url: string): void;
}

export interface AppMenuOptions {
    readonly platform: NodeJS.Platform;
    /** Reload and the developer tools: only in a development build (electron-vite dev). */
    readonly development: boolean;
    /** Whether View › Dark Mode shows a check. */
    readonly darkMode: boolean;
    /** The project's page (package.json homepage), for Help; the items are left out without one. */
    readonly homepage?: string;
}

/**
 * The standard menus with the platform's conventions: the app menu (About, Settings, Hide, Quit)
 * on macOS, Quit under File and About under Help elsewhere; CmdOrCtrl is ⌘ on macOS, Ctrl elsewhere.
 */
export function appMenuTemplate(options: AppMenuOptions, actions: AppMenuActions): MenuItemConstructorOptions[] {
    const mac = options.platform === "darwin";
    const settings: MenuItemConstructorOptions = {
        label: mac ? "Settings…" : "Settings",
        accelerator: "CmdOrCtrl+,",
        click: () => actions.send({ command: "openSettings" })
    };
    const template: MenuItemConstructorOptions[] = [];
    if (mac) {
        template.push({
            role: "appMenu",
            submenu: [
                { role: "about" },
                { type: "separator" },
                settings,
                { type: "separator" },
                { role: "services" },
                { type: "separator" },
                { role: "hide" },
                { role: "hideOthers" },
                { role: "unhide" },
                { type: "separator" },
                { role: "quit" }
            ]
        });
    }
    template.push(
        {
            label: "&File",
            submenu: [
                { label: "New Workspace", accelerator: "CmdOrCtrl+N", click: () => actions.send({ command: "newWorkspace" }) },
                { label: "Open Model…", accelerator: "CmdOrCtrl+O", click: () => actions.openModel() },
                { type: "separator" },
                ...(mac ? [] : [settings, { type: "separator" } as const]),
                { role: mac ? "close" : "quit" }
            ]
        },
        {
            label: "&Edit",
            submenu: [
                { role: "undo" },
                { role: "redo" },
                { type: "separator" },
                { role: "cut" },
                { role: "copy" },
                { role: "paste" },
                { role: "selectAll" },
                { type: "separator" },
                { label: "Find…", accelerator: "CmdOrCtrl+F", click: () => actions.send({ command: "find" }) }
            ]
        },
        {
            label: "&View",
            submenu: [
                ...(options.development
                    ? ([{ role: "reload" }, { role: "forceReload" }, { role: "toggleDevTools" }, { type: "separator" }] as const)
                    : []),
                { role: "resetZoom" },
                { role: "zoomIn" },
                { role: "zoomOut" },
                { type: "separator" },
                {
                    label: "Dark Mode",
                    type: "checkbox",
                    checked: options.darkMode,
                    accelerator: "CmdOrCtrl+Shift+L",
                    click: () => actions.toggleDarkMode()
                },
                { role: "togglefullscreen" }
            ]
        },
        {
            label: "W&orkspace",
            submenu: Array.from({ length: MAX_WORKSPACE_SHORTCUT }, (_, index) => ({
                label: index === MAX_WORKSPACE_SHORTCUT - 1 ? "Last Workspace" : `Workspace ${index + 1}`,
                accelerator: `CmdOrCtrl+${index + 1}`,
                click: () => actions.send({ command: "selectWorkspace", position: index + 1 })
            }))
        },
        { role: "windowMenu" },
        {
            role: "help",
            submenu: [
                { label: "Check for Updates…", click: () => actions.checkForUpdates() },
                ...(options.homepage === undefined
                    ? []
                    : ([
                          { type: "separator" },
                          { label: "Kvault on GitHub", click: () => actions.openExternal(options.homepage!) },
                          { label: "Report a Problem", click: () => actions.openExternal(`${options.homepage!.replace(/\/$/, "")}/issues`) }
                      ] as const)),
                ...(mac ? [] : ([{ type: "separator" }, { role: "about" }] as const))
            ]
        }
    );
    return template;
}
