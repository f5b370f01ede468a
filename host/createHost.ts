// The one composition root of a Kvault host: the desktop app (main/index.ts) and the
// headless server (host/headless/serve.ts) both call createHost, and pass only what differs: where
// the data lives, how the engine starts, the dialogs, and the settings screen's view of the API.
// Each then puts the returned dispatcher on its own transport (IPC, or the WebSocket beside the HTTP API).
import fs from "node:fs";
import path from "node:path";
import type { ModelPoolSettings } from "../contract/modelPoolSettings.js";
import type { EngineSettings } from "../contract/settings.js";
import type { RpcResult } from "../contract/rpc.js";
import { KvaultError } from "../engine/index.js";
import { backendSummary } from "./backends/BackendConfig.js";
import { Backends } from "./backends/Backends.js";
import type { OwnApi } from "./backends/leakProbeTargets.js";
import { remoteBackendWarning } from "./backends/parseBackendOption.js";
import { routeEngineCalls } from "./backends/routeEngineCalls.js";
import { routeTurns } from "./backends/routeTurns.js";
import type { ModelRouter } from "./http/routeModelRequests.js";
import type { LocalModels } from "./http/localModelEntries.js";
import { ModelNotFoundError } from "./models/modelErrors.js";
import { ApiKeys, type ApiKeyEntry } from "./http/ApiKeys.js";
import { backendGateway, type Gateway } from "./http/gateway/serveGateway.js";
import { formatRequestLine, RequestLog } from "./http/RequestLog.js";
import { McpManager } from "./mcp/McpManager.js";
import { MemoryRecord } from "./memoryRecord/MemoryRecord.js";
import { McpPermissionPrompts } from "./mcp/McpPermissionPrompts.js";
import { withMcpTools } from "./mcp/mcpToolTurns.js";
import { hostMethods } from "./rpc/hostMethods.js";
import { RpcDispatcher } from "./rpc/RpcDispatcher.js";
import { machineMemory } from "./settings/machineMemory.js";
import { ModelPoolSettingsHost } from "./settings/ModelPoolSettingsHost.js";
import { SettingsFile } from "./settings/SettingsFile.js";
import { SettingsHost, type SettingsHostParts } from "./settings/SettingsHost.js";
import { DataDirectoryLock } from "./store/DataDirectoryLock.js";
import { WorkspaceStore } from "./store/WorkspaceStore.js";
import { PresetStore } from "./presets/PresetStore.js";
import { RetrievalIndexes } from "./retrieval/RetrievalIndexes.js";
import type { EnginePool } from "./supervisor/EnginePool.js";
import type { EngineSupervisor } from "./supervisor/EngineSupervisor.js";
import type { HostModels } from "./supervisor/modelMethods.js";

/** What a platform's engine start gives the host: the supervised engine and the model manager over it. */
export interface HostEngine {
    readonly supervisor: EngineSupervisor;
    readonly models: HostModels;
}

/** The parts every host has, as the platform's own parts (the local API, the app shell) are built from them. */
export interface SharedHostParts<E extends HostEngine> {
    readonly settingsFile: SettingsFile;
    /** Resolves once the engine is ready, or rejects with why it could not start. */
    readonly engine: Promise<E>;
    /** The live key set the API serves: the command line's, then settings.json's (added by the settings). */
    readonly apiKeys: ApiKeys;
    /** The remote backends, one live set: workspaces on one run their turns there, and the API forwards `NAME/<model id>` to it. */
    readonly backends: Backends;
    /** Forwards the API's requests for a backend's models; always there, as the settings screen may add a backend at any time. */
    readonly gateway: Gateway;
    /** One line per API request, never the prompt unless the platform asks: the developer panel's and /metrics' source. */
    readonly requestLog: RequestLog;
}

/** What differs in a platform's settings screen and RPC: the rest of SettingsHost's and hostMethods' parts are the root's. */
export interface PlatformParts
    extends Pick<SettingsHostParts, "fromCommandLine" | "commandLineBackends" | "localApi" | "switchLocalApi" | "configFor"> {
    /** The native Open dialog for a GGUF; a host without a window leaves it out (dialog_unavailable). */
    readonly chooseModelFile?: () => Promise<RpcResult<"chooseModelFile">>;
    /** Kvault's own API for the leak probe, once it listens. */
    readonly ownApi?: () => OwnApi | undefined;
    /** The local models besides the engine's (host/supervisor/EnginePool.ts), once the platform has them: a workspace's `localModel` runs there. */
    readonly localModels?: () => (ModelRouter & LocalModels) | undefined;
}

export interface HostPlatform<E extends HostEngine> {
    /** Which settings screen the host shows. */
    readonly kind: SettingsHostParts["host"];
    /** Where the data lives: its lock, settings.json, the workspaces, the models and the model library. */
    readonly dataDirectory: string;
    /** Who holds the data directory, as a second owner's refusal names it ("npm run serve", "the Kvault app"). */
    readonly lockOwner: string;
    readonly log: (line: string) => void;
    /** Tells the user that the data cannot be opened (the app: an error box); the error is thrown after it either way. */
    readonly dataRefused?: (error: KvaultError) => void;
    /** `--extra-api-key`'s for this run: in force beside settings.json's, not revocable on the settings screen. */
    readonly commandLineKeys?: readonly ApiKeyEntry[];
    /** The headless server prints every request line on stderr (prompts with --log-prompts); the app keeps them for its panel alone. */
    readonly requestLines: { readonly printed: boolean; readonly withPrompts: boolean };
    /** The engine settings this run starts with: the file's, by default; the headless server puts its command line's on top. */
    readonly engineSettings?: (settingsFile: SettingsFile) => EngineSettings;
    /** Kvault's version, named in the audit record's export ("unknown" when the platform cannot tell). */
    readonly kvaultVersion?: string;
    /** Starts the engine on those settings; the host does not wait for it (the app's window opens while it loads). */
    startEngine(settingsFile: SettingsFile, engineSettings: EngineSettings): Promise<E>;
    /**
     * The local models beside the engine's (host/supervisor/localModelPool.ts, with the platform's
     * spawner), made once the engine is ready: a workspace's `localModel` and the API's `model` run
     * there. The host owns it: forgetting a workspace reaches each of its engines, and close stops them.
     */
    localModels?(engine: E, parts: { readonly settingsFile: SettingsFile; readonly poolSettings: () => ModelPoolSettings }): EnginePool;
    /** The local models' settings given on the command line for this run, over settings.json's (the headless server's flags). */
    readonly modelPoolFromCommandLine?: Partial<ModelPoolSettings>;
    /** The platform's own parts, built once the shared ones exist. */
    parts(shared: SharedHostParts<E>): PlatformParts;
}

export interface Host<E extends HostEngine> extends SharedHostParts<E> {
    /** The workspaces and chats; one that cannot open answers every store call with why. */
    readonly store: Promise<WorkspaceStore>;
    readonly settings: SettingsHost;
    /** The RPC's one server loop and methods; the platform puts it on its transport. */
    readonly rpc: RpcDispatcher;
    /** The memory timeline on disk (host/memoryRecord/): appended as the engine records, exported as JSON Lines. */
    readonly memoryRecord: MemoryRecord;
    /** The local models beside the engine's, once the engine is ready (platform.localModels); undefined before, or in a host that runs one. */
    localModels(): EnginePool | undefined;
    /**
     * Cancels the downloads, stops the engine (its running turns end with engine_stopped), closes the
     * store after its pending saves and releases the data directory; never rejects. An engine still
     * starting is waited for at most `waitForStartMs`; past it, it is left to the platform (Electron
     * ends its utility processes when the app quits).
     */
    close(options?: { readonly waitForStartMs?: number }): Promise<void>;
}

/** Assembles a host from its platform: opens the data (refusing a directory another host holds), starts the engine, builds the RPC. */
export async function createHost<E extends HostEngine>(platform: HostPlatform<E>): Promise<Host<E>> {
    const { dataDirectory, log } = platform;
    fs.mkdirSync(dataDirectory, { recursive: true, mode: 0o700 });
    const dataLock = acquireDataLock(platform);
    process.once("exit", () => dataLock.release());
    // The settings screen's file: the engine settings, the model loaded last, the keys and backends.
    const settingsFile = await SettingsFile.open(path.join(dataDirectory, "settings.json"), { log });
    // The workspaces and chats live in the data directory too; the rest of the host runs without them.
    const store = WorkspaceStore.open(dataDirectory, { log });
    store.catch((error: unknown) => log(`The workspaces could not be opened: ${(error as Error).message}`));
    const running = platform.engineSettings?.(settingsFile) ?? settingsFile.current.engine;
    const engine = platform.startEngine(settingsFile, running);
    engine.catch(() => undefined); // each call that needs the engine answers with why it could not start
    // The local models beside the engine's, on the settings in force at each scan, load and release.
    const modelPool = new ModelPoolSettingsHost(settingsFile, platform.modelPoolFromCommandLine);
    let pool: EnginePool | undefined;
    const poolMade = engine.then(
        (started) => (pool = platform.localModels?.(started, { settingsFile, poolSettings: () => modelPool.running() })),
        () => undefined
    );
    const engineReady = async (): Promise<EngineSupervisor> => (await engine).supervisor;

    const apiKeys = new ApiKeys(platform.commandLineKeys);
    const backends = new Backends([]);
    const gateway = backendGateway(backends);
    const requestLog = new RequestLog({ logPrompts: platform.requestLines.withPrompts });
    if (platform.requestLines.printed) {
        requestLog.subscribe((entry) => log(formatRequestLine(entry)));
    }
    const shared: SharedHostParts<E> = { settingsFile, engine, apiKeys, backends, gateway, requestLog };
    const own = platform.parts(shared);
    // Until the engine is ready the pool is not made: a workspace's turn on its own model waits for it, as a turn waits for the engine.
    const poolSoon: ModelRouter & LocalModels = {
        has: async (id) => (await poolMade)?.has(id) ?? false,
        acquire: async (id) =>
            (await poolMade)?.acquire(id) ?? Promise.reject(new ModelNotFoundError(`The engine did not start; "${id}" was not loaded.`)),
        loaded: async () => (await poolMade)?.loaded() ?? [],
        available: async () => (await poolMade)?.available() ?? []
    };
    const localModels = (): (ModelRouter & LocalModels) | undefined =>
        pool ?? (platform.localModels === undefined ? own.localModels?.() : poolSoon);
    const settings = new SettingsHost({
        host: platform.kind,
        file: settingsFile,
        stateDirectory: dataDirectory,
        engine: engineReady,
        running,
        fromCommandLine: own.fromCommandLine,
        apiKeys,
        commandLineKeyIds: platform.commandLineKeys?.map(({ id }) => id),
        backends,
        commandLineBackends: own.commandLineBackends,
        localApi: own.localApi,
        switchLocalApi: own.switchLocalApi,
        configFor: own.configFor,
        localEngines: async () => ((await localModels()?.loaded()) ?? []).filter((model) => !model.primary).map((model) => model.engine),
        machine: machineMemory,
        log
    });
    // The settings put settings.json's backends (or the command line's) in the live set above.
    const origin = (own.commandLineBackends?.length ?? 0) > 0 ? "" : " (settings)";
    for (const { config } of backends.all()) {
        log(`Backend "${config.name}"${origin}: ${backendSummary(config)}.`);
        if (config.remote) {
            log(remoteBackendWarning(config));
        }
    }
    // The MCP tool servers of mcp.json, connected in the background: a chat's turn offers the tools its workspace picks.
    const mcp = { manager: new McpManager(dataDirectory, log), prompts: new McpPermissionPrompts() };
    void mcp.manager.connectAll();
    // The audit record: every loaded model's engine's memory events, polled into the data directory's rotated files.
    const memoryRecord = new MemoryRecord({
        dataDirectory,
        kvaultVersion: platform.kvaultVersion ?? "unknown",
        engines: async () => {
            const supervisor = await engineReady();
            const loaded = (await localModels()?.loaded()) ?? [];
            const ownId = loaded.find((model) => model.primary)?.id;
            return [
                {
                    id: ownId,
                    primary: true,
                    memoryEvents: (afterSeq: number) => supervisor.call("memoryEvents", { afterSeq }),
                    model: { name: supervisor.info.modelName, file: supervisor.info.modelPath }
                },
                // Asked without a lease: the record must not keep an idle model loaded.
                ...loaded
                    .filter((model) => !model.primary)
                    .map((model) => ({
                        id: model.id,
                        primary: false,
                        memoryEvents: (afterSeq: number) => model.engine.call("memoryEvents", { afterSeq }),
                        model: { name: model.engine.info.modelName, file: model.path }
                    }))
            ];
        },
        log
    }).start();
    const findWorkspace = async (id: string) => (await store).findMeta(id);
    const rpc = new RpcDispatcher(
        engineReady,
        hostMethods({
            engine: engineReady,
            models: async () => (await engine).models,
            store: () => store,
            settings,
            backends,
            chooseModelFile: own.chooseModelFile,
            ownApi: own.ownApi,
            mcp,
            requestLog: () => requestLog,
            presets: () => PresetStore.open(dataDirectory),
            retrieval: new RetrievalIndexes(dataDirectory, async (inputs) => (await engineReady()).call("embed", { inputs })),
            memoryRecord,
            localModels,
            modelPool
        }),
        withMcpTools(routeTurns(engineReady, findWorkspace, backends, localModels), {
            ...mcp,
            mcp: mcp.manager,
            engine: engineReady,
            findWorkspace,
            log
        }),
        routeEngineCalls(engineReady, findWorkspace, localModels)
    );

    const close = async ({ waitForStartMs }: { readonly waitForStartMs?: number } = {}): Promise<void> => {
        const started = await Promise.race([
            engine.catch(() => undefined),
            ...(waitForStartMs === undefined
                ? []
                : [new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), waitForStartMs))])
        ]);
        if (started !== undefined) {
            await memoryRecord.lastPoll(); // the engine's last events, before it stops, if it answers
        }
        memoryRecord.dispose();
        await started?.models
            .stopDownloads()
            .catch((error: unknown) => log(`Cancelling the downloads failed: ${(error as Error).message}`));
        await (started === undefined ? undefined : poolMade)
            ?.then((made) => made?.dispose())
            .catch((error: unknown) => log(`Stopping the local models failed: ${(error as Error).message}`));
        await started?.supervisor.dispose().catch((error: unknown) => log(`Stopping the engine failed: ${(error as Error).message}`));
        await mcp.manager.dispose();
        // Waits for the saves already asked for: each is one short write and fsync.
        await store.then(
            (opened) => opened.close(),
            () => undefined
        );
        dataLock.release();
    };
    return { ...shared, store, settings, rpc, memoryRecord, localModels: () => pool, close };
}

/** One owner per data directory: a second host on it (the app, or a server with --data-dir) refuses to start, naming the first. */
function acquireDataLock(
    platform: Pick<HostPlatform<HostEngine>, "dataDirectory" | "lockOwner" | "log" | "dataRefused">
): DataDirectoryLock {
    try {
        return DataDirectoryLock.acquire(platform.dataDirectory, { owner: platform.lockOwner, log: platform.log });
    } catch (error) {
        if (error instanceof KvaultError) {
            platform.dataRefused?.(error);
        }
        throw error;
    }
}
