// The desktop app's conventions, wired to Electron: the application menu, light or dark, links
// out of the app, the native dialog for a GGUF, and Check for Updates. Thin on purpose: what each
// does lives, tested, in main/window/ and main/updates/; this binds it to the window and settings.
import { app, dialog, Menu, nativeTheme, shell, type BrowserWindow } from "electron";
import fs from "node:fs";
import { join } from "node:path";
import { APP_COMMAND_EVENT, type AppCommand } from "../contract/appCommands.js";
import { toggledTheme } from "./settings/AppSettings.js";
import type { SettingsService } from "./settings/SettingsService.js";
import { loadUpdater } from "./updates/loadUpdater.js";
import { projectPageFromAppUpdate } from "./updates/projectPage.js";
import { UpdateFlow } from "./updates/UpdateFlow.js";
import { appMenuTemplate } from "./window/appMenu.js";
import { openExternalLink, type ExternalLinkOutcome } from "./window/externalLinks.js";
import { chooseModelFile, type ModelFileChoice } from "./window/modelFileDialog.js";

export interface AppShellOptions {
    readonly settings: SettingsService;
    /** The app's window, while there is one. */
    readonly window: () => BrowserWindow | undefined;
    /** Reload and the developer tools in the menu. */
    readonly development: boolean;
    readonly log: (line: string) => void;
}

export interface AppShell {
    /** A link the window tried to follow out of the app: asks, then opens it in the system browser. */
    openExternal(url: string): Promise<ExternalLinkOutcome>;
    /** The native file dialog for a GGUF, over the window; the chosen path, or canceled. */
    chooseModel(): Promise<ModelFileChoice>;
    /** Sends a menu command to the window's renderer (contract/appCommands.ts); dropped when there is no window. */
    send(command: AppCommand): void;
}

/** Installs the menu and the saved theme; call once, after app 'ready'. */
export function installAppShell(options: AppShellOptions): AppShell {
    const { settings, log } = options;
    nativeTheme.themeSource = settings.theme;

    const window = (): BrowserWindow | undefined => {
        const current = options.window();
        return current === undefined || current.isDestroyed() ? undefined : current;
    };
    const send = (command: AppCommand): void => {
        window()?.webContents.send(APP_COMMAND_EVENT, command);
    };
    const openExternal = (url: string): Promise<ExternalLinkOutcome> =>
        openExternalLink(url, {
            showMessageBox: (box) => {
                const parent = window();
                return parent === undefined ? dialog.showMessageBox(box) : dialog.showMessageBox(parent, box);
            },
            openExternal: (target) => shell.openExternal(target),
            log
        });
    const chooseModel = (): Promise<ModelFileChoice> =>
        chooseModelFile((dialogOptions) => {
            const parent = window();
            return parent === undefined ? dialog.showOpenDialog(dialogOptions) : dialog.showOpenDialog(parent, dialogOptions);
        }, settings.modelPath);

    const homepage = projectPage();
    const updates = new UpdateFlow(
        loadUpdater,
        {
            ask: async (box) => {
                const parent = window();
                return (parent === undefined ? await dialog.showMessageBox(box) : await dialog.showMessageBox(parent, box)).response;
            },
            progress: (fraction) => window()?.setProgressBar(fraction ?? -1),
            openReleases: () => {
                if (homepage !== undefined) {
                    void openExternal(`${homepage}/releases`);
                } else {
                    log("This build names no GitHub repository (resources/app-update.yml), so there is no releases page to open.");
                }
            }
        },
        { currentVersion: app.getVersion(), platform: process.platform, packaged: app.isPackaged, log }
    );

    const installMenu = (): void => {
        const template = appMenuTemplate(
            { platform: process.platform, development: options.development, darkMode: nativeTheme.shouldUseDarkColors, homepage },
            {
                send,
                openModel: () =>
                    void chooseModel().then(
                        (choice) => {
                            if (choice.kind === "chosen") {
                                send({ command: "openModelFile", path: choice.path });
                            }
                        },
                        (error: unknown) => log(`The file dialog failed: ${(error as Error).message}`)
                    ),
                toggleDarkMode: () => {
                    const theme = toggledTheme(nativeTheme.shouldUseDarkColors);
                    nativeTheme.themeSource = theme;
                    settings.setTheme(theme).catch((error: unknown) => log((error as Error).message));
                    installMenu(); // the check mark follows
                },
                checkForUpdates: () => void updates.checkNow(),
                openExternal: (url) => void openExternal(url)
            }
        );
        Menu.setApplicationMenu(Menu.buildFromTemplate(template));
    };
    installMenu();
    // The system switching between light and dark moves the check mark while Kvault follows it.
    nativeTheme.on("updated", () => installMenu());

    return { openExternal, chooseModel, send };
}

/** The project's GitHub page, from the app-update.yml electron-builder packaged; undefined in a development run. */
function projectPage(): string | undefined {
    if (!app.isPackaged) {
        return undefined;
    }
    try {
        return projectPageFromAppUpdate(fs.readFileSync(join(process.resourcesPath, "app-update.yml"), "utf8"));
    } catch {
        return undefined;
    }
}
