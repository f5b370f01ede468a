// `npm run serve -- [options]`: Kvault headless. The engine in its own process, the renderer, the
// RPC WebSocket and the OpenAI-compatible API on one loopback port. When ready it prints
// `Kvault listening on URL` on stdout, then (with the renderer built) the browser's one-time
// login link, and a new link on stdout each time one is used; everything else goes to stderr.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { DEMO_MODEL } from "../../contract/models.js";
import { KvaultError } from "../../engine/index.js";
import { EngineSupervisor } from "../supervisor/EngineSupervisor.js";
import { ApiKeys } from "../http/ApiKeys.js";
import { KvaultHttpServer } from "../http/KvaultHttpServer.js";
import { inspectModelInChild } from "../models/inspectModelInChild.js";
import { modelFactsCache } from "../models/modelFactsCache.js";
import { hostMethods } from "../rpc/hostMethods.js";
import { RpcDispatcher } from "../rpc/RpcDispatcher.js";
import { RpcServer } from "../rpc/RpcServer.js";
import { DataDirectoryLock } from "../store/DataDirectoryLock.js";
import { WorkspaceStore } from "../store/WorkspaceStore.js";
import { modelMethods } from "../supervisor/modelMethods.js";
import { inspectServeModel, resolveServeModel, serveModelId } from "./resolveServeModel.js";
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
    const options = parseServeOptions(process.argv.slice(2), process.env);
    if (!isLoopbackHost(options.host)) {
        log(remoteListeningWarning(options.host)); // parseServeOptions let it through: --allow-remote was given
    }
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    // One owner per data directory: a second server on it refuses to start, naming the first.
    const dataLock = DataDirectoryLock.acquire(options.dataDir, { owner: "npm run serve", log });
    process.once("exit", () => dataLock.release());
    // The workspaces and chats live in the data directory too. A store that cannot open (say, one
    // from a newer Kvault) answers every store call with why; the rest of the server still runs.
    const store = WorkspaceStore.open(options.dataDir, { log });
    store.catch((error: unknown) => log(`The workspaces could not be opened: ${(error as Error).message}`));
    const model = resolveServeModel(options, log);
    await inspectServeModel(options, model);
    const apiKey = options.apiKey ?? `kv-${crypto.randomBytes(24).toString("hex")}`;
    if (options.apiKey === undefined) {
        log(`API key (new for this start; set --api-key or KVAULT_API_KEY to keep one): ${apiKey}`);
    }
    if (options.extraApiKeys.length > 0) {
        log(`Extra API keys, each with its own workspaces: ${options.extraApiKeys.map(({ id }) => id).join(", ")}.`);
    }

    const supervisor = await EngineSupervisor.start(
        {
            modelPath: model.path,
            mode: options.mode,
            kvCacheType: options.kvType,
            window: options.context,
            prefillContextSize: options.prefillCapacity,
            decodeContextSize: options.context,
            numDecodeSequences: options.decodeSequences,
            pageTokens: options.pageTokens,
            numPages: options.poolPages,
            onWindowAboveCapacity: "clamp",
            handoffStepDelayMs: options.handoffDemoMs
        },
        { log }
    );
    const info = supervisor.info;
    log(`Engine: ${info.modelName} on ${info.backend}, ${info.mode.effective} mode${info.mode.reason ? ` (${info.mode.reason})` : ""}.`);
    if (info.window.clamped) {
        log(
            `The window was clamped from ${info.window.configured.toLocaleString("en-US")} to ${info.window.limit.toLocaleString("en-US")} tokens: the measured ${info.window.boundBy} capacity is smaller.`
        );
    }
    supervisor.on("switched", (event) =>
        log(`Engine: switched to ${event.info.modelName}; ${event.numEnded} request(s) ended with model_switched.`)
    );
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
    // The page's RPC: the same server loop as the desktop app's; without settings, the settings methods answer settings_unavailable.
    const engine = async (): Promise<EngineSupervisor> => supervisor;
    // one line per API request on stderr, never the prompt unless --log-prompts
    const requestLog = new RequestLog({ logPrompts: options.logPrompts });
    requestLog.subscribe((entry) => log(formatRequestLine(entry)));
    const rpc = new RpcServer(
        new RpcDispatcher(engine, hostMethods({ engine, models: async () => models, store: () => store, requestLog: () => requestLog })),
        { log }
    );
    const rendererDirectory = path.join(repositoryRoot, "out", "renderer");
    if (!fs.existsSync(path.join(rendererDirectory, "index.html"))) {
        log("The renderer is not built (out/renderer); serving the API only. `npm run serve` builds it.");
    }
    const server = new KvaultHttpServer({
        engine: supervisor,
        apiKey,
        extraApiKeys: new ApiKeys(options.extraApiKeys),
        corsOrigins: options.corsOrigins,
        requestLog,
        kvaultVersion: readPackageVersion(),
        host: options.host,
        port: options.port,
        modelId: () => serveModelId(supervisor.info.modelPath),
        modelFacts: modelFactsCache(inspectModelInChild, { contextSize: options.context, sequences: options.decodeSequences }),
        health: () => supervisor.health(),
        rendererDirectory: fs.existsSync(rendererDirectory) ? rendererDirectory : undefined,
        onLoginLink: (link) => void process.stdout.write(loginLine(link)),
        onRpcUpgrade: (request, socket, head) => rpc.handleUpgrade(request, socket, head)
    });
    const address = await server.listen();

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
