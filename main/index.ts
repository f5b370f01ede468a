// The Electron host: one hardened window, the engine in a utilityProcess, the IPC handlers, and
// the local API when the settings switch it on. The pieces live in main/window, main/ipc,
// main/engine, main/settings and main/localApi so that they can be read, and the pure ones
// tested, alone.
import { app, BrowserWindow, session } from "electron";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { WorkspaceStore } from "../host/store/WorkspaceStore.js";
import type { EngineSupervisor } from "../host/supervisor/EngineSupervisor.js";
import { startEngine, type StartedEngine } from "./engine/startEngine.js";
import { utilityProcessSpawner } from "./engine/utilityProcessSpawner.js";
import { hostMethods } from "../host/rpc/hostMethods.js";
import { RpcDispatcher } from "../host/rpc/RpcDispatcher.js";
import { registerIpcHandlers } from "./ipc/registerIpcHandlers.js";
import { LocalApiController } from "./localApi/LocalApiController.js";
import { SettingsService } from "./settings/SettingsService.js";
import { SettingsStore } from "./settings/SettingsStore.js";
import { contentSecurityPolicy } from "./window/contentSecurityPolicy.js";
import { createMainWindow } from "./window/createMainWindow.js";
import { hardenSession } from "./window/hardenSession.js";

// electron-vite dev sets ELECTRON_RENDERER_URL; a packaged app ignores it, so nobody can
// point an installed Kvault at another page through the environment.
const devServerUrl = app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL;
const appUrl = devServerUrl ?? pathToFileURL(join(import.meta.dirname, "../renderer/index.html")).href;
const preloadPath = join(import.meta.dirname, "../preload/index.cjs");
// Emitted beside this file by electron.vite.config.ts (the engine process entry).
const engineEntry = join(import.meta.dirname, "engineProcess.js");

const log = (line: string): void => void process.stderr.write(`[kvault] ${line}\n`);

let mainWindow: BrowserWindow | undefined;
let engine: Promise<StartedEngine> | undefined;
let localApi: LocalApiController | undefined;
let workspaceStore: Promise<WorkspaceStore> | undefined;

function openMainWindow(): void {
    mainWindow = createMainWindow(appUrl, preloadPath);
    mainWindow.on("closed", () => {
        mainWindow = undefined;
    });
}

async function startHost(): Promise<void> {
    hardenSession(session.defaultSession, contentSecurityPolicy(devServerUrl === undefined ? "production" : "development"));
    const userData = app.getPath("userData");
    const settings = await SettingsStore.open(join(userData, "settings.json"), { log });
    // The workspaces and chats (userData/workspaces/); one that cannot open answers every store call with why.
    const store = WorkspaceStore.open(userData, { log });
    workspaceStore = store;
    store.catch((error: unknown) => log(`The workspaces could not be opened: ${(error as Error).message}`));

    const started = startEngine({
        modelsDirectory: join(userData, "models"),
        libraryFile: join(userData, "models.json"),
        modelPath: settings.current.modelPath,
        spawner: utilityProcessSpawner({ entry: engineEntry }),
        log
    });
    engine = started;
    // Every call that needs the engine gets this failure as its answer; logged once here.
    started.catch((error: unknown) => log(`The engine could not start: ${(error as Error).message}`));

    localApi = new LocalApiController(async () => {
        const { supervisor, modelId } = await started;
        return { engine: supervisor, modelId };
    }, log);
    const settingsService = new SettingsService(settings, localApi, log);
    const engineReady = async (): Promise<EngineSupervisor> => (await started).supervisor;
    registerIpcHandlers({
        appUrl,
        rpc: new RpcDispatcher(
            engineReady,
            hostMethods({ engine: engineReady, models: async () => (await started).models, store: () => store, settings: settingsService })
        )
    });
    openMainWindow();
    void settingsService.startLocalApi();
}

/**
 * How long quitting waits for an engine that is still loading its model. Past it the app quits
 * anyway: Electron ends its utility processes with it, so nothing is orphaned.
 */
const QUIT_WAIT_FOR_START_MS = 2_000;

/** Stops the local API and the engine (running turns end with engine_stopped); never rejects. */
async function stopHost(): Promise<void> {
    await localApi?.close().catch((error: unknown) => log(`Stopping the local API failed: ${(error as Error).message}`));
    const started = await Promise.race([
        engine?.catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), QUIT_WAIT_FOR_START_MS))
    ]);
    await started?.models.stopDownloads().catch((error: unknown) => log(`Cancelling the downloads failed: ${(error as Error).message}`));
    await started?.supervisor.dispose().catch((error: unknown) => log(`Stopping the engine failed: ${(error as Error).message}`));
    // Waits for the saves already asked for: each is one short write and fsync.
    await workspaceStore?.then(
        (store) => store.close(),
        () => undefined
    );
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

    // Quitting waits for the engine to shut down (bounded by its grace period), so it can end
    // turns cleanly instead of being torn down with the app.
    let stopped = false;
    let stopping: Promise<void> | undefined;
    app.on("will-quit", (event) => {
        if (stopped) {
            return;
        }
        event.preventDefault();
        stopping ??= stopHost().finally(() => {
            stopped = true;
            app.quit();
        });
    });

    void app
        .whenReady()
        .then(async () => {
            await startHost();

            // Registered after ready: macOS re-opens the window from the dock, and a window
            // cannot be created before ready.
            app.on("activate", () => {
                if (BrowserWindow.getAllWindows().length === 0) {
                    openMainWindow();
                }
            });
        })
        .catch((error: unknown) => {
            log(`Kvault could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
            app.exit(1);
        });
}
