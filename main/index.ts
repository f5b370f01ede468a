// The Electron host: one hardened window, the engine in a utilityProcess, the IPC handlers, and
// the local API when the settings switch it on; the menu, the theme, links out and updates come
// from appShell.ts. The pieces live in main/window, main/ipc, main/engine, main/settings,
// main/localApi and main/updates so that they can be read, and the pure ones tested, alone.
import { app, BrowserWindow, dialog, screen, session } from "electron";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DEMO_MODEL } from "../contract/models.js";
import { KvaultError } from "../engine/index.js";
import { backendSummary } from "../host/backends/BackendConfig.js";
import { Backends } from "../host/backends/Backends.js";
import { remoteBackendWarning } from "../host/backends/parseBackendOption.js";
import { routeTurns } from "../host/backends/routeTurns.js";
import { backendGateway } from "../host/http/gateway/serveGateway.js";
import { childInspector } from "../host/models/inspectModelInChild.js";
import { DataDirectoryLock } from "../host/store/DataDirectoryLock.js";
import { WorkspaceStore } from "../host/store/WorkspaceStore.js";
import { installAppShell, type AppShell } from "./appShell.js";
import { BindingTestRelay, nodeLlamaCppBindingTestModule } from "./engine/BindingTestRelay.js";
import type { EngineSupervisor } from "../host/supervisor/EngineSupervisor.js";
import { hostMethods } from "../host/rpc/hostMethods.js";
import { RpcDispatcher } from "../host/rpc/RpcDispatcher.js";
import { startEngine, type StartedEngine } from "./engine/startEngine.js";
import { utilityInspectionSpawner } from "./engine/utilityInspectionSpawner.js";
import { utilityFork, utilityProcessSpawner } from "./engine/utilityProcessSpawner.js";
import { registerIpcHandlers } from "./ipc/registerIpcHandlers.js";
import { LocalApiController } from "./localApi/LocalApiController.js";
import { SettingsService } from "./settings/SettingsService.js";
import { ApiKeys } from "../host/http/ApiKeys.js";
import { engineConfigFor } from "../host/settings/engineConfigFor.js";
import { machineMemory } from "../host/settings/machineMemory.js";
import { SettingsFile } from "../host/settings/SettingsFile.js";
import { SettingsHost } from "../host/settings/SettingsHost.js";
import { contentSecurityPolicy } from "./window/contentSecurityPolicy.js";
import { createMainWindow } from "./window/createMainWindow.js";
import { focusWindow } from "./window/focusWindow.js";
import { hardenSession } from "./window/hardenSession.js";
import { placeWindow } from "./window/windowState.js";
import { WindowStateStore } from "./window/WindowStateStore.js";

// electron-vite dev sets ELECTRON_RENDERER_URL; a packaged app ignores it, so nobody can
// point an installed Kvault at another page through the environment.
const devServerUrl = app.isPackaged ? undefined : process.env.ELECTRON_RENDERER_URL;
const appUrl = devServerUrl ?? pathToFileURL(join(import.meta.dirname, "../renderer/index.html")).href;
const preloadPath = join(import.meta.dirname, "../preload/index.cjs");
// Emitted beside this file by electron.vite.config.ts (the engine process entry).
const engineEntry = join(import.meta.dirname, "engineProcess.js");
// And the process that reads model files' headers (host/models/appInspectModelProcessMain.ts).
const inspectionEntry = join(import.meta.dirname, "inspectModelProcess.js");

const log = (line: string): void => void process.stderr.write(`[kvault] ${line}\n`);

let mainWindow: BrowserWindow | undefined;
let engine: Promise<StartedEngine> | undefined;
let localApi: LocalApiController | undefined;
let workspaceStore: Promise<WorkspaceStore> | undefined;
let bindingTestRelay: BindingTestRelay | undefined;
let windowState: WindowStateStore | undefined;
let shell: AppShell | undefined;
let dataLock: DataDirectoryLock | undefined;

/**
 * node-llama-cpp tests a llama.cpp binary in a child process before loading it; an engine
 * process cannot fork one with the RunAsNode fuse off, so main forks it for the engine (README,
 * "The engine's binary test"). Without the relay the engine still starts wherever no test is
 * needed (macOS, Windows on the CPU); elsewhere its start error says which backends failed.
 */
async function startBindingTestRelay(): Promise<BindingTestRelay | undefined> {
    const testModule = nodeLlamaCppBindingTestModule();
    if (testModule === undefined) {
        log("node-llama-cpp has no dist/bindings/utils/testBindingBinary.js; the engine's binary tests cannot be relayed.");
        return undefined;
    }
    return BindingTestRelay.listen({ testModule, fork: utilityFork, log }).catch((error: unknown) => {
        log(`The binding-test relay could not listen (${(error as Error).message}); the engine's binary tests cannot run.`);
        return undefined;
    });
}

/** Opens the window where it was last (kept on a display that is there now), and tracks where it goes. */
function openMainWindow(): void {
    const placement = placeWindow(
        windowState?.saved,
        screen.getAllDisplays().map((display) => display.workArea),
        screen.getPrimaryDisplay().workArea
    );
    const window = createMainWindow(appUrl, preloadPath, { placement, onExternalLink: (url) => void shell?.openExternal(url) });
    mainWindow = window;
    windowState?.track(window);
    window.on("closed", () => {
        mainWindow = undefined;
    });
}

async function startHost(): Promise<void> {
    hardenSession(session.defaultSession, contentSecurityPolicy(devServerUrl === undefined ? "production" : "development"));
    const userData = app.getPath("userData");
    // One owner per data directory: the single-instance lock covers this app, not a headless
    // server started with --data-dir on the same folder.
    mkdirSync(userData, { recursive: true });
    try {
        dataLock = DataDirectoryLock.acquire(userData, { owner: "the Kvault app", log });
    } catch (error) {
        if (error instanceof KvaultError) {
            dialog.showErrorBox("Kvault cannot open its data", error.message);
        }
        throw error;
    }
    process.once("exit", () => dataLock?.release());
    const settings = await SettingsFile.open(join(userData, "settings.json"), { log });
    windowState = await WindowStateStore.open(join(userData, "window-state.json"), log);
    // The workspaces and chats (userData/workspaces/); one that cannot open answers every store call with why.
    const store = WorkspaceStore.open(userData, { log });
    workspaceStore = store;
    store.catch((error: unknown) => log(`The workspaces could not be opened: ${(error as Error).message}`));

    const relay = await startBindingTestRelay();
    bindingTestRelay = relay;
    const started = startEngine({
        modelsDirectory: join(userData, "models"),
        libraryFile: join(userData, "models.json"),
        modelPath: settings.current.modelPath,
        spawner: utilityProcessSpawner({ entry: engineEntry, env: { ...process.env, ...relay?.engineEnv() } }),
        inspectModel: childInspector({ spawn: utilityInspectionSpawner(inspectionEntry, relay?.engineEnv()) }),
        log,
        binaryTests: relay,
        engine: engineConfigFor(settings.current.engine)
    });
    engine = started;
    // Every call that needs the engine gets this failure as its answer; logged once here.
    started.catch((error: unknown) => log(`The engine could not start: ${(error as Error).message}`));

    // The keys created on the settings screen, each with its own workspaces; the local API serves them beside its own key.
    const apiKeys = new ApiKeys();
    // The remote backends of the settings screen, in one live set: workspaces on one run their turns
    // there, and the local API forwards requests for their models (`NAME/<model id>`).
    const backends = new Backends([]);
    const gateway = backendGateway(backends);
    localApi = new LocalApiController(async () => {
        const { supervisor, modelId, health, modelFacts } = await started;
        return { engine: supervisor, modelId, health, modelFacts, extraApiKeys: apiKeys, gateway };
    }, log);
    const settingsService = new SettingsService(settings, localApi, log);
    const settingsHost = new SettingsHost({
        host: "desktop",
        file: settings,
        stateDirectory: userData,
        engine: async () => (await started).supervisor,
        running: settings.current.engine,
        apiKeys,
        backends,
        localApi: (current) => settingsService.localApiView(current),
        switchLocalApi: async (change) => void (await settingsService.setLocalApi(change)),
        machine: machineMemory,
        log
    });
    void started.then(
        (running) => {
            // The model loaded last is the one the next start loads (null: the demo model).
            running.supervisor.on("switched", (event) => {
                const modelPath = running.modelId() === DEMO_MODEL ? null : event.info.modelPath;
                settingsService.rememberModel(modelPath).catch((error: unknown) => log((error as Error).message));
            });
            if (running.fallback !== undefined) {
                void tellAboutFallback(running.fallback);
            }
            if (running.draftFallback !== undefined) {
                void tellAboutDraftFallback(running.draftFallback);
            }
        },
        () => undefined
    );
    const appShell = installAppShell({ settings: settingsService, window: () => mainWindow, development: devServerUrl !== undefined, log });
    shell = appShell;
    for (const { config } of backends.all()) {
        log(`Backend "${config.name}" (settings): ${backendSummary(config)}.`);
        if (config.remote) {
            log(remoteBackendWarning(config));
        }
    }
    const engineReady = async (): Promise<EngineSupervisor> => (await started).supervisor;
    registerIpcHandlers({
        appUrl,
        rpc: new RpcDispatcher(
            engineReady,
            hostMethods({
                engine: engineReady,
                models: async () => (await started).models,
                store: () => store,
                settings: settingsHost,
                chooseModelFile: () => appShell.chooseModel(),
                requestLog: () => localApi?.requestLog,
                backends
            }),
            routeTurns(engineReady, async (id) => (await store).findMeta(id), backends)
        )
    });
    openMainWindow();
    void settingsService.startLocalApi();
}

/** Says, over the window, that the saved model did not load and the demo model runs instead. */
async function tellAboutFallback(fallback: NonNullable<StartedEngine["fallback"]>): Promise<void> {
    const box = {
        type: "warning" as const,
        buttons: ["OK"],
        message: `Kvault could not load ${fallback.modelPath}.`,
        detail: `${fallback.reason}\n\nThe built-in demo model runs instead. Open another model with File › Open Model…; Kvault tries yours again at its next start.`
    };
    await (mainWindow === undefined ? dialog.showMessageBox(box) : dialog.showMessageBox(mainWindow, box));
}

/** Says, over the window, that the draft model did not serve and speculative decoding is off for this run. */
async function tellAboutDraftFallback(fallback: NonNullable<StartedEngine["draftFallback"]>): Promise<void> {
    const box = {
        type: "warning" as const,
        buttons: ["OK"],
        message: `Kvault could not use the draft model ${fallback.draftModel}.`,
        detail: `${fallback.reason}\n\nThe model runs without speculative decoding. Choose another draft model, or turn speculative decoding off, in Settings › Engine.`
    };
    await (mainWindow === undefined ? dialog.showMessageBox(box) : dialog.showMessageBox(mainWindow, box));
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
    await bindingTestRelay?.close();
    await windowState?.flush();
    // Waits for the saves already asked for: each is one short write and fsync.
    await workspaceStore?.then(
        (store) => store.close(),
        () => undefined
    );
    dataLock?.release();
}

// Sandbox every renderer, including any a future feature opens, not only the main window.
app.enableSandbox();

if (!app.requestSingleInstanceLock()) {
    app.quit();
} else {
    // A second launch (a launcher click, a file manager) brings this one's window back instead.
    app.on("second-instance", () => {
        if (!focusWindow(mainWindow) && app.isReady() && windowState !== undefined) {
            openMainWindow();
        }
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
