// The Electron host: one hardened window, the engine in a utilityProcess, the IPC handlers, and
// the local API when the settings switch it on; the menu, the theme, links out and updates come
// from appShell.ts. The pieces live in main/window, main/ipc, main/engine, main/settings,
// main/localApi and main/updates so that they can be read, and the pure ones tested, alone.
import { app, BrowserWindow, dialog, screen, session } from "electron";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { EngineSettings } from "../contract/settings.js";
import type { EngineConfigInput } from "../engine/index.js";
import { DEMO_MODEL } from "../contract/models.js";
import { createHost, type Host } from "../host/createHost.js";
import { childInspector } from "../host/models/inspectModelInChild.js";
import { cachedModelInspector } from "../host/models/modelFactsCache.js";
import { installAppShell, type AppShell } from "./appShell.js";
import { cliInvocation } from "./cli/cliInvocation.js";
import { runCliInMain } from "./cli/runCliInMain.js";
import { BindingTestRelay, nodeLlamaCppBindingTestModule } from "./engine/BindingTestRelay.js";
import { appModelPool } from "./engine/appModelPool.js";
import { startEngine, type StartedEngine } from "./engine/startEngine.js";
import { utilityInspectionSpawner } from "./engine/utilityInspectionSpawner.js";
import { utilityFork, utilityProcessSpawner } from "./engine/utilityProcessSpawner.js";
import { registerIpcHandlers } from "./ipc/registerIpcHandlers.js";
import { LocalApiController } from "./localApi/LocalApiController.js";
import { SettingsService } from "./settings/SettingsService.js";
import { engineConfigFor } from "../host/settings/engineConfigFor.js";
import { diskKvConfig, DISK_KV_KEY_FILE } from "../host/settings/diskKvKey.js";
import { readOrCreateKeychainKey } from "./settings/diskKvKeychain.js";
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
let host: Host<StartedEngine> | undefined;
let localApi: LocalApiController | undefined;
let bindingTestRelay: BindingTestRelay | undefined;
let windowState: WindowStateStore | undefined;
let shell: AppShell | undefined;

/**
 * node-llama-cpp tests a llama.cpp binary in a child process before loading it; an engine
 * process cannot fork one with the RunAsNode fuse off, so main forks it for the engine (docs/backends.md,
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
    let settingsService: SettingsService | undefined;
    const started = await createHost<StartedEngine>({
        kind: "desktop",
        // The single-instance lock covers this app; the data directory's lock a headless server started with --data-dir on it too.
        dataDirectory: userData,
        lockOwner: "the Kvault app",
        log,
        kvaultVersion: app.getVersion(),
        dataRefused: (error) => dialog.showErrorBox("Kvault cannot open its data", error.message),
        // the developer panel's, never the prompts
        requestLines: { printed: false, withPrompts: false },
        startEngine: (settingsFile, engineSettings) => {
            const running = startAppEngine(userData, settingsFile.current.modelPath, engineSettings);
            // Every call that needs the engine gets this failure as its answer; logged once here.
            running.catch((error: unknown) => log(`The engine could not start: ${(error as Error).message}`));
            return running;
        },
        // Each workspace's own local model, in a utilityProcess of its own, loaded on its first turn and unloaded when idle.
        localModels: (running, { settingsFile, poolSettings }) =>
            appModelPool({
                started: running,
                settings: () => settingsFile.current.engine,
                poolSettings,
                spawner: utilityProcessSpawner({ entry: engineEntry, env: { ...process.env, ...bindingTestRelay?.engineEnv() } }),
                inspectModel: cachedModelInspector(
                    childInspector({ spawn: utilityInspectionSpawner(inspectionEntry, bindingTestRelay?.engineEnv()) })
                ),
                extraConfig: appDiskKv(userData),
                log
            }),
        parts: ({ settingsFile, engine, apiKeys, gateway, requestLog }) => {
            // The OpenAI-compatible API on 127.0.0.1, on and off as the settings say; the settings screen's keys beside its own.
            const api = new LocalApiController(
                async () => {
                    const { supervisor, modelId, health, modelFacts } = await engine;
                    // the audit record is the host's, made once these parts are: read at each request
                    const memoryRecord = async (): Promise<string> => (host === undefined ? "" : host.memoryRecord.exportJsonl());
                    // made as the engine became ready, before this await resumed
                    const models = host?.localModels();
                    return { engine: supervisor, modelId, health, modelFacts, extraApiKeys: apiKeys, gateway, memoryRecord, models };
                },
                log,
                requestLog
            );
            localApi = api;
            const service = new SettingsService(settingsFile, api, log);
            settingsService = service;
            const appShell = installAppShell({ settings: service, window: () => mainWindow, development: devServerUrl !== undefined, log });
            shell = appShell;
            return {
                localApi: (current) => service.localApiView(current),
                switchLocalApi: async (change) => void (await service.setLocalApi(change)),
                chooseModelFile: () => appShell.chooseModel()
            };
        }
    });
    host = started;
    windowState = await WindowStateStore.open(join(userData, "window-state.json"), log);
    void started.engine.then(
        (running) => {
            // The model loaded last is the one the next start loads (null: the demo model).
            running.supervisor.on("switched", (event) => {
                const modelPath = running.modelId() === DEMO_MODEL ? null : event.info.modelPath;
                settingsService?.rememberModel(modelPath).catch((error: unknown) => log((error as Error).message));
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
    registerIpcHandlers({ appUrl, rpc: started.rpc });
    openMainWindow();
    void settingsService?.startLocalApi();
}

/** Starts the engine in a utilityProcess, with main relaying its binary tests, on the settings' model and engine settings. */
async function startAppEngine(userData: string, modelPath: string | null, engineSettings: EngineSettings): Promise<StartedEngine> {
    const relay = await startBindingTestRelay();
    bindingTestRelay = relay;
    return startEngine({
        modelsDirectory: join(userData, "models"),
        libraryFile: join(userData, "models.json"),
        modelPath,
        spawner: utilityProcessSpawner({ entry: engineEntry, env: { ...process.env, ...relay?.engineEnv() } }),
        inspectModel: childInspector({ spawn: utilityInspectionSpawner(inspectionEntry, relay?.engineEnv()) }),
        log,
        binaryTests: relay,
        engine: { ...engineConfigFor(engineSettings), ...appDiskKv(userData) }
    });
}

/** The engine's `kvDisk`, its key kept by the OS keychain; none (and a log line) where the OS has no keychain. */
function appDiskKv(userData: string): Pick<EngineConfigInput, "kvDisk"> {
    const keychain = readOrCreateKeychainKey(join(userData, `${DISK_KV_KEY_FILE}.safe`));
    if (keychain.key === undefined) {
        log(`Workspaces cannot keep their KV on disk: ${keychain.why}.`);
        return {};
    }
    return { kvDisk: diskKvConfig(userData, keychain.key) };
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
    await windowState?.flush();
    await host?.close({ waitForStartMs: QUIT_WAIT_FOR_START_MS });
    await bindingTestRelay?.close();
}

// `kvault ls` in a terminal (the deb puts this binary on the PATH as kvault): the command, no window.
// Only in Electron itself: under a test runner's faked electron, argv is the runner's.
const cliArgs = process.versions.electron === undefined ? undefined : cliInvocation(process.argv, app.isPackaged);
if (cliArgs !== undefined) {
    await runCliInMain(cliArgs);
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
