// `npm run serve -- [options]`: Kvault headless, built as out/main/serve.js (startBuiltServer.js runs
// it). The engine in its own process, the renderer, the RPC WebSocket and the OpenAI-compatible API
// on one loopback port. When ready it prints
// `Kvault listening on URL` on stdout, then (with the renderer built) the browser's one-time
// login link, and a new link on stdout each time one is used; everything else goes to stderr.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { EngineSettingName, EngineSettings } from "../../contract/settings.js";
import type { OwnApi } from "../backends/leakProbeTargets.js";
import { KvaultError, type EngineConfigInput } from "../../engine/index.js";
import { createHost } from "../createHost.js";
import { KvaultHttpServer } from "../http/KvaultHttpServer.js";
import { inspectModelInChild } from "../models/inspectModelInChild.js";
import { cachedModelInspector } from "../models/modelFactsCache.js";
import { RpcServer } from "../rpc/RpcServer.js";
import { serveModelId } from "./resolveServeModel.js";
import { serveModelPool } from "./serveModelPool.js";
import { startServeEngine } from "./startServeEngine.js";
import { engineConfigFor } from "../settings/engineConfigFor.js";
import { diskKvConfig, DISK_KV_KEY_FILE, readOrCreateDiskKvKeyFile } from "../settings/diskKvKey.js";
import { isLoopbackHost, parseServeOptions, remoteListeningWarning, ServeOptionsError } from "./serveOptions.js";

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
    const apiKey = given.apiKey ?? `kv-${crypto.randomBytes(24).toString("hex")}`;
    // One cache of model facts for the start's check, the switch's inspection and /v1/models: a file is inspected once.
    const inspectModel = cachedModelInspector(inspectModelInChild);
    // The mode, a --prefill-capacity and the demo modes are the command line's alone; the rest follows the settings.
    const headlessConfig = (settings: EngineSettings): Omit<EngineConfigInput, "modelPath"> => ({
        ...engineConfigFor(settings),
        mode: given.mode,
        ...(given.prefillCapacityGiven ? { prefillContextSize: given.prefillCapacity } : {}),
        onWindowAboveCapacity: "clamp",
        handoffStepDelayMs: given.handoffDemoMs,
        tokenDelayMs: given.streamDemoMs,
        // workspaces that keep their KV on disk seal it with the data directory's 0600 key file
        kvDisk: diskKvConfig(given.dataDir, readOrCreateDiskKvKeyFile(path.join(given.dataDir, DISK_KV_KEY_FILE)))
    });
    const listening: { url?: string; port?: number } = {}; // once the server listens
    const own: { api?: OwnApi } = {}; // once listening: the leak probe's "kvault" target
    const host = await createHost({
        kind: "headless",
        dataDirectory: given.dataDir,
        lockOwner: "npm run serve",
        log,
        kvaultVersion: readPackageVersion(),
        commandLineKeys: given.extraApiKeys,
        // one line per API request on stderr, never the prompt unless --log-prompts
        requestLines: { printed: true, withPrompts: given.logPrompts },
        // The settings screen's engine settings, with the command line's on top for this run.
        engineSettings: (file) => Object.freeze({ ...file.current.engine, ...given.engineFromCommandLine }),
        startEngine: (settingsFile, engineSettings) =>
            startServeEngine({
                given,
                settingsFile,
                engineSettings,
                inspectModel,
                configFor: headlessConfig,
                log,
                // once the model passed its checks: the keys this server will take
                beforeStart: () => {
                    if (given.apiKey === undefined) {
                        log(`API key (new for this start; set --api-key or KVAULT_API_KEY to keep one): ${apiKey}`);
                    }
                    if (given.extraApiKeys.length > 0) {
                        log(`Extra API keys, each with its own workspaces: ${given.extraApiKeys.map(({ id }) => id).join(", ")}.`);
                    }
                }
            }),
        // The models found on disk (LM Studio's, Ollama's, Hugging Face's, the settings' folders), each loaded by the first request naming it.
        modelPoolFromCommandLine: given.modelPoolFromCommandLine,
        localModels: ({ supervisor }, { settingsFile, poolSettings }) =>
            serveModelPool({
                given,
                supervisor,
                settings: () => Object.freeze({ ...settingsFile.current.engine, ...given.engineFromCommandLine }),
                poolSettings,
                configFor: headlessConfig,
                inspectModel,
                log
            }),
        parts: () => ({
            fromCommandLine: Object.fromEntries(
                Object.keys(given.engineFromCommandLine).map((name) => [name, given.engineFlags[name as EngineSettingName]])
            ),
            // --backend's replace settings.json's for this run
            commandLineBackends: given.backends,
            // The API is this server itself; the page is never given its key (it was printed at start).
            localApi: () => ({
                enabled: true,
                port: listening.port ?? given.port,
                apiKey: null,
                url: listening.url ?? null,
                problem: null,
                editable: false
            }),
            configFor: headlessConfig,
            ownApi: () => own.api
        })
    });
    const { supervisor } = await host.engine;
    const models = host.localModels(); // made as the engine became ready, before this await resumed
    // The page's RPC: the same server loop and methods as the desktop app's, over a WebSocket beside the API.
    const rpc = new RpcServer(host.rpc, { log });
    const rendererDirectory = path.join(repositoryRoot, "out", "renderer");
    if (!fs.existsSync(path.join(rendererDirectory, "index.html"))) {
        log("The renderer is not built (out/renderer); serving the API only. `npm run build` builds it.");
    }
    const server = new KvaultHttpServer({
        engine: supervisor,
        apiKey,
        extraApiKeys: host.apiKeys,
        corsOrigins: given.corsOrigins,
        requestLog: host.requestLog,
        kvaultVersion: readPackageVersion(),
        host: given.host,
        port: given.port,
        modelId: () => serveModelId(supervisor.info.modelPath),
        // the engine's window and sequences now, which the settings screen may have changed since the start
        modelFacts: (modelPath) =>
            inspectModel(modelPath, { contextSize: supervisor.info.window.limit, sequences: supervisor.info.numDecodeSequences }),
        health: () => supervisor.health(),
        rendererDirectory: fs.existsSync(rendererDirectory) ? rendererDirectory : undefined,
        onLoginLink: (link) => void process.stdout.write(loginLine(link)),
        onRpcUpgrade: (request, socket, head) => rpc.handleUpgrade(request, socket, head),
        gateway: host.gateway,
        models,
        memoryRecord: () => host.memoryRecord.exportJsonl()
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
        await host.close(); // stops the local models' engines too
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
