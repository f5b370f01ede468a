// Pure on purpose (no electron): the app's OpenAI-compatible API, started and stopped as the
// settings say. Tested with a fake engine on real loopback ports.
import type { EngineClient, EngineErrorPayload } from "../../contract/engineProtocol.js";
import type { ModelFacts } from "../../contract/models.js";
import { KvaultError } from "../../engine/index.js";
import type { ApiKeys } from "../../host/http/ApiKeys.js";
import type { Gateway } from "../../host/http/gateway/serveGateway.js";
import type { LocalModels } from "../../host/http/localModelEntries.js";
import type { ModelRouter } from "../../host/http/routeModelRequests.js";
import { KvaultHttpServer, type EngineHealth } from "../../host/http/KvaultHttpServer.js";
import { toErrorAnswer } from "../../host/rpc/toErrorAnswer.js";
import type { LocalApiSettings } from "../settings/AppSettings.js";
import { RequestLog } from "../../host/http/RequestLog.js";

/** The server could not listen (most often: the port is taken); it is not running. */
export class LocalApiStartError extends KvaultError {
    readonly code = "local_api_start_failed";
}

/** What the API serves: the engine, once it is ready, and the model id `/v1/models` lists. */
export interface LocalApiTarget {
    readonly engine: EngineClient;
    /** Read on every request, so the id follows a model switch. */
    readonly modelId: () => string;
    /** What `/health` reports: the supervisor's state, and why once it is down. */
    readonly health?: () => EngineHealth;
    /** The loaded file's facts for `/v1/models` (architecture, heads, KV bytes, memory), as the headless server gives them. */
    readonly modelFacts?: (modelPath: string) => Promise<ModelFacts>;
    /** The keys created on the settings screen (host/settings/SettingsHost.ts), each with its own workspaces; revoked ones are refused at once. */
    readonly extraApiKeys?: ApiKeys;
    /** The settings' remote backends: their models listed as `NAME/<model id>` and requests for them forwarded, as in headless mode. */
    readonly gateway?: Gateway;
    /** The data directory's audit record as JSON Lines, for `GET /v1/kvault/memory-record` (host/memoryRecord/). */
    readonly memoryRecord?: () => Promise<string>;
    /** The local models beside the engine's (host/supervisor/EnginePool.ts): listed, and loaded by a request's `model`, as in headless mode. */
    readonly models?: ModelRouter & LocalModels;
}

export interface LocalApiStatus {
    /** Where it serves; null while off. */
    readonly url: string | null;
    /** Why the last start failed while it is meant to be on; null otherwise. */
    readonly problem: EngineErrorPayload | null;
}

/** Loopback only: the app's API is for programs on this machine, never the network. */
const LOCAL_API_HOST = "127.0.0.1";

/**
 * Runs at most one KvaultHttpServer on 127.0.0.1 with the configured port and key. Not reentrant:
 * the caller (SettingsService) serializes `apply` calls.
 */
export class LocalApiController {
    #server: KvaultHttpServer | undefined;
    #running: { readonly port: number; readonly apiKey: string; readonly url: string } | undefined;
    #problem: EngineErrorPayload | null = null;
    /**
     * `target` resolves once the engine is ready; enabling waits for it. `requestLog` is the host's
     * (host/createHost.ts), for the developer panel: kept across restarts of the server, never the prompts.
     */
    constructor(
        private readonly target: () => Promise<LocalApiTarget>,
        private readonly log: (line: string) => void,
        readonly requestLog: RequestLog = new RequestLog({ logPrompts: false })
    ) {}

    get status(): LocalApiStatus {
        return { url: this.#running?.url ?? null, problem: this.#problem };
    }

    /**
     * Brings the server to `settings`: stops it when disabled, (re)starts it when the port or key
     * changed. Throws (LocalApiStartError, or the engine's start error) when it cannot serve; the
     * reason stays in `status.problem` and no server is left running.
     */
    async apply(settings: LocalApiSettings): Promise<void> {
        const running = this.#running;
        if (settings.enabled && running?.port === settings.port && running.apiKey === settings.apiKey) {
            return;
        }
        await this.close();
        if (!settings.enabled) {
            return;
        }
        try {
            const { engine, modelId, health, modelFacts, extraApiKeys, gateway, memoryRecord, models } = await this.target();
            const server = new KvaultHttpServer({
                engine,
                modelId,
                health,
                modelFacts,
                extraApiKeys,
                gateway,
                memoryRecord,
                models,
                apiKey: settings.apiKey,
                host: LOCAL_API_HOST,
                port: settings.port,
                requestLog: this.requestLog
            });
            const address = await server.listen().catch((error: unknown) => {
                throw new LocalApiStartError(listenFailure(settings.port, error), { cause: error });
            });
            this.#server = server;
            this.#running = { port: settings.port, apiKey: settings.apiKey, url: address.url };
            this.log(`The local API serves ${modelId()} at ${address.url}.`);
        } catch (error) {
            this.#problem = toErrorAnswer(error);
            throw error;
        }
    }

    /** Stops the server if it runs, and forgets any problem; idempotent. */
    async close(): Promise<void> {
        const server = this.#server;
        this.#server = undefined;
        this.#running = undefined;
        this.#problem = null;
        if (server !== undefined) {
            await server.close();
            this.log("The local API stopped.");
        }
    }
}

function listenFailure(port: number, error: unknown): string {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") {
        return `Port ${port} is in use by another program, so the local API could not start. Choose another port, or stop that program.`;
    }
    if (code === "EACCES") {
        return `Kvault may not listen on port ${port} (permission denied). Choose a port from 1024 to 65535.`;
    }
    return `The local API could not listen on 127.0.0.1:${port} (${(error as Error).message}). Choose another port.`;
}
