// `npm run serve -- [options]`: Kvault headless, built as out/main/serve.js (startBuiltServer.js runs
// it). The engine in its own process, the renderer, the RPC WebSocket and the OpenAI-compatible API
// on one loopback port. When ready it prints
// `Kvault listening on URL` on stdout, then (with the renderer built) the browser's one-time
// login link, and a new link on stdout each time one is used; everything else goes to stderr.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_MODEL } from "../../contract/models.js";
import type { EngineSettingName, EngineSettings } from "../../contract/KvaultBridge.js";
import { backendSummary } from "../backends/BackendConfig.js";
import { Backends } from "../backends/Backends.js";
import { remoteBackendWarning } from "../backends/parseBackendOption.js";
import type { OwnApi } from "../backends/leakProbeTargets.js";
import { routeTurns } from "../backends/routeTurns.js";
import { backendGateway } from "../http/gateway/serveGateway.js";
import { KvaultError, type EngineConfigInput } from "../../engine/index.js";
import { EngineSupervisor } from "../supervisor/EngineSupervisor.js";
import { ApiKeys } from "../http/ApiKeys.js";
import { KvaultHttpServer } from "../http/KvaultHttpServer.js";
import { inspectModelInChild } from "../models/inspectModelInChild.js";
import { cachedModelInspector } from "../models/modelFactsCache.js";
import { hostMethods } from "../rpc/hostMethods.js";
import { RpcDispatcher } from "../rpc/RpcDispatcher.js";
import { RpcServer } from "../rpc/RpcServer.js";
import { DataDirectoryLock } from "../store/DataDirectoryLock.js";
import { WorkspaceStore } from "../store/WorkspaceStore.js";
import { modelMethods } from "../supervisor/modelMethods.js";
import { inspectServeModel, resolveServeModel, serveModelId } from "./resolveServeModel.js";
import { engineConfigFor } from "../settings/engineConfigFor.js";
import { machineMemory } from "../settings/machineMemory.js";
import { SettingsFile } from "../settings/SettingsFile.js";
import { SettingsHost } from "../settings/SettingsHost.js";
import { isLoopbackHost, parseServeOptions, remoteListeningWarning, ServeOptionsError } from "./serveOptions.js";
import { formatRequestLine, RequestLog } from "../http/RequestLog.js";

const log = (line: string): void => void process.stderr.write(`${line}\n`);
const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

async function main(): Promise<void> {
    if (process.argv.includes("--help")) {
        const { serveUsage } = await import("./serveOptions.js");
        process.stdout.write(serveUsage);
        return;
    }
    const given = parseServeOptions(process.argv.slice(2), process.env);
    if (!isLoopbackHost(given.host)) {
        log(remoteListeningWarning(given.host)); // parseServeOptions let it through: --allow-remote was given
    }
    fs.mkdirSync(given.dataDir, { recursive: true, mode: 0o700 });
    // One owner per data directory: a second server on it refuses to start, naming the first.
    const dataLock = DataDirectoryLock.acquire(given.dataDir, { owner: "npm run serve", log });
    process.once("exit", () => dataLock.release());
    // The settings screen's file: its engine settings and model, with the command line's on top for this run.
    const settingsFile = await SettingsFile.open(path.join(given.dataDir, "settings.json"), { log });
    const engineSettings = Object.freeze({ ...settingsFile.current.engine, ...given.engineFromCommandLine });
    const savedModel = settingsFile.current.modelPath;
    const options = {
        ...given,
        model:
            !given.modelGiven && savedModel !== null && fs.existsSync(savedModel)
                ? { kind: "file" as const, path: savedModel }
                : given.model,
        kvType: engineSettings.kvCacheType,
        context: engineSettings.contextSize,
        decodeSequences: engineSettings.decodeSequences
    };
    // The workspaces and chats live in the data directory too. A store that cannot open (say, one
    // from a newer Kvault) answers every store call with why; the rest of the server still runs.
    const store = WorkspaceStore.open(options.dataDir, { log });
    store.catch((error: unknown) => log(`The workspaces could not be opened: ${(error as Error).message}`));
    const model = resolveServeModel(options, log);
    // One cache of model facts for the start's check, the switch's inspection and /v1/models: a file is inspected once.
    const inspectModel = cachedModelInspector(inspectModelInChild);
    await inspectServeModel(options, model, inspectModel);
    if (
        engineSettings.speculation !== "draft-model" &&
        (given.engineFromCommandLine.draftMaxTokens !== undefined || given.engineFromCommandLine.draftMinConfidence !== undefined)
    ) {
        log(
            "--draft-max and --draft-p-min tune a draft model, and speculation is not by draft model this run (--draft-model PATH, or the settings' Draft model): they have no effect until it is."
        );
    }
    if (engineSettings.speculation === "draft-model" && engineSettings.draftModel !== null) {
        // a draft model is a model file like any other: a crafted one is refused here, not in the engine
        await inspectModel(engineSettings.draftModel, { contextSize: options.context, sequences: options.decodeSequences });
    }
    const apiKey = options.apiKey ?? `kv-${crypto.randomBytes(24).toString("hex")}`;
    if (options.apiKey === undefined) {
        log(`API key (new for this start; set --api-key or KVAULT_API_KEY to keep one): ${apiKey}`);
    }
    if (options.extraApiKeys.length > 0) {
        log(`Extra API keys, each with its own workspaces: ${options.extraApiKeys.map(({ id }) => id).join(", ")}.`);
    }

    // The mode, a --prefill-capacity and the demo modes are the command line's alone; the rest follows the settings.
    const headlessConfig = (settings: EngineSettings): Omit<EngineConfigInput, "modelPath"> => ({
        ...engineConfigFor(settings),
        mode: options.mode,
        ...(options.prefillCapacityGiven ? { prefillContextSize: options.prefillCapacity } : {}),
        onWindowAboveCapacity: "clamp",
        handoffStepDelayMs: options.handoffDemoMs,
        tokenDelayMs: options.streamDemoMs
    });
    const supervisor = await EngineSupervisor.start({ modelPath: model.path, ...headlessConfig(engineSettings) }, { log, inspectModel });
    const info = supervisor.info;
    log(`Engine: ${info.modelName} on ${info.backend}, ${info.mode.effective} mode${info.mode.reason ? ` (${info.mode.reason})` : ""}.`);
    if (info.window.clamped) {
        log(
            `The window was clamped from ${info.window.configured.toLocaleString("en-US")} to ${info.window.limit.toLocaleString("en-US")} tokens: the measured ${info.window.boundBy} capacity is smaller.`
        );
    }
    supervisor.on("switched", (event) => {
        log(
            event.cause === "settings"
                ? `Engine: restarted with new settings; ${event.numEnded} request(s) ended with engine_settings_changed.`
                : `Engine: switched to ${event.info.modelName}; ${event.numEnded} request(s) ended with model_switched.`
        );
        // The model loaded last is the one the next start loads, unless --model names one (null: the demo model).
        const modelPath = serveModelId(event.info.modelPath) === DEMO_MODEL ? null : event.info.modelPath;
        if (settingsFile.current.modelPath !== modelPath) {
            settingsFile.update((current) => ({ ...current, modelPath })).catch((error: unknown) => log((error as Error).message));
        }
    });
    supervisor.on("down", (event) => log(event.error.message));
    supervisor.on("crashed", (event) =>
        log(
            `The engine process stopped (${event.signal ?? `exit ${event.exitCode}`}); ${event.numInterrupted} requests ended with an error.${event.willRestart ? " Restarting it." : ""}`
        )
    );

    // "tiny" is the built-in demo model, generated into the data directory as at start.
    const models = modelMethods(
        supervisor,
        (name) =>
            name === DEMO_MODEL
                ? resolveServeModel({ ...options, model: { kind: "preset", preset: DEMO_MODEL } }, log).path
                : path.resolve(name),
        // Downloads go next to the demo model; the model library is the data directory's models.json.
        path.join(options.dataDir, "models"),
        {
            libraryFile: path.join(options.dataDir, "models.json"),
            downloadStallMs: options.downloadStallSeconds === undefined ? undefined : options.downloadStallSeconds * 1000
        }
    );
    // The API keys: --extra-api-key's for this run, and the settings screen's (created and revoked live, kept in settings.json).
    const extraApiKeys = new ApiKeys(options.extraApiKeys);
    const listening: { url?: string; port?: number } = {}; // once the server listens
    // Remote backends: a workspace that names one runs its turns there; Kvault's API forwards NAME/… models to it.
    // One live set: settings.json's (changed on the settings screen), or --backend's for this run.
    const backends = new Backends([]);
    const settings = new SettingsHost({
        host: "headless",
        file: settingsFile,
        stateDirectory: options.dataDir,
        engine: async () => supervisor,
        running: engineSettings,
        fromCommandLine: Object.fromEntries(
            Object.keys(options.engineFromCommandLine).map((name) => [name, options.engineFlags[name as EngineSettingName]])
        ),
        apiKeys: extraApiKeys,
        commandLineKeyIds: options.extraApiKeys.map(({ id }) => id),
        backends,
        commandLineBackends: options.backends,
        // The API is this server itself; the page is never given its key (it was printed at start).
        localApi: () => ({
            enabled: true,
            port: listening.port ?? options.port,
            apiKey: null,
            url: listening.url ?? null,
            problem: null,
            editable: false
        }),
        configFor: headlessConfig,
        machine: machineMemory,
        log
    });
    // The page's RPC: the same server loop and methods as the desktop app's.
    const engine = async (): Promise<EngineSupervisor> => supervisor;
    // one line per API request on stderr, never the prompt unless --log-prompts
    const requestLog = new RequestLog({ logPrompts: options.logPrompts });
    requestLog.subscribe((entry) => log(formatRequestLine(entry)));
    for (const { config: backend } of backends.all()) {
        log(`Backend "${backend.name}"${options.backends.length > 0 ? "" : " (settings)"}: ${backendSummary(backend)}.`);
        if (backend.remote) {
            log(remoteBackendWarning(backend));
        }
    }
    const own: { api?: OwnApi } = {}; // once listening: the leak probe's "kvault" target
    const chatTurns = routeTurns(engine, async (id) => (await store).findMeta(id), backends);
    const rpc = new RpcServer(
        new RpcDispatcher(
            engine,
            hostMethods({
                engine,
                models: async () => models,
                store: () => store,
                settings,
                backends,
                ownApi: () => own.api,
                requestLog: () => requestLog
            }),
            chatTurns
        ),
        { log }
    );
    const rendererDirectory = path.join(repositoryRoot, "out", "renderer");
    if (!fs.existsSync(path.join(rendererDirectory, "index.html"))) {
        log("The renderer is not built (out/renderer); serving the API only. `npm run build` builds it.");
    }
    const server = new KvaultHttpServer({
        engine: supervisor,
        apiKey,
        extraApiKeys,
        corsOrigins: options.corsOrigins,
        requestLog,
        kvaultVersion: readPackageVersion(),
        host: options.host,
        port: options.port,
        modelId: () => serveModelId(supervisor.info.modelPath),
        // the engine's window and sequences now, which the settings screen may have changed since the start
        modelFacts: (modelPath) =>
            inspectModel(modelPath, { contextSize: supervisor.info.window.limit, sequences: supervisor.info.numDecodeSequences }),
        health: () => supervisor.health(),
        rendererDirectory: fs.existsSync(rendererDirectory) ? rendererDirectory : undefined,
        onLoginLink: (link) => void process.stdout.write(loginLine(link)),
        onRpcUpgrade: (request, socket, head) => rpc.handleUpgrade(request, socket, head),
        // always there: the settings screen may add a backend to the live set at any time
        gateway: backendGateway(backends)
    });
    const address = await server.listen();
    Object.assign(listening, { url: address.url, port: Number(new URL(address.url).port) });
    own.api = { url: address.url, key: apiKey, modelId: () => serveModelId(supervisor.info.modelPath) };

    let stopping = false;
    const stop = async (): Promise<void> => {
        if (stopping) {
            return;
        }
        stopping = true;
        await rpc.close();
        await server.close();
        await models.stopDownloads().catch((error: unknown) => log(`Cancelling the downloads failed: ${(error as Error).message}`));
        await supervisor.dispose();
        await store.then(
            (opened) => opened.close(),
            () => undefined
        );
        dataLock.release();
        process.exit(0);
    };
    process.on("SIGINT", () => void stop());
    process.on("SIGTERM", () => void stop());
    process.stdout.write(`Kvault listening on ${address.url}\n${address.loginLink === undefined ? "" : loginLine(address.loginLink)}`);
}

/** Only whoever started the server sees its stdout: the login link is the browser's way in (host/http/LoginSessions.ts). */
function loginLine(link: string): string {
    return `Kvault login link (works once): ${link}\n`;
}

main().catch((error: unknown) => {
    if (error instanceof ServeOptionsError) {
        log(error.message);
        process.exit(2);
    }
    log(
        error instanceof KvaultError
            ? error.message
            : `Kvault could not start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`
    );
    process.exit(1);
});

/** Kvault's version from package.json, for Ollama's /api/version; undefined when it cannot be read (the field is left out). */
function readPackageVersion(): string | undefined {
    try {
        const version: unknown = (JSON.parse(fs.readFileSync(path.join(repositoryRoot, "package.json"), "utf8")) as { version?: unknown })
            .version;
        return typeof version === "string" ? version : undefined;
    } catch {
        return undefined;
    }
}
