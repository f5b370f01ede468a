import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { EngineClient } from "../../contract/engineProtocol.js";
import type { ModelFacts } from "../../contract/models.js";
import { rpcLimits } from "../../contract/limits.js";
import { invariant } from "../../engine/index.js";
import { canServe, type EngineHealth } from "../supervisor/EngineHealth.js";
import type { ApiContext } from "./ApiContext.js";
import type { ApiKeys } from "./ApiKeys.js";
import { serveCompletion } from "./completions/serveCompletion.js";
import { serveEmbeddings } from "./embeddings/serveEmbeddings.js";
import { serveOllama } from "./ollama/serveOllama.js";
import { anthropicPaths, serveAnthropic } from "./anthropic/serveAnthropic.js";
import { serveResponses } from "./responses/serveResponses.js";
import { StoredResponses } from "./responses/StoredResponses.js";
import { sendError, sendJson, sendText, setSecurityHeaders } from "./httpResponses.js";
import { fromEngineError, OpenAiError } from "./OpenAiError.js";
import { serveChatCompletion } from "./serveChatCompletion.js";
import { prometheusMetrics } from "./prometheusMetrics.js";
import { computeFields, engineComputeOf } from "./computeFields.js";
import { limitConnections } from "./limitConnections.js";
import { InFlightLimit } from "./InFlightLimit.js";
import { LoginSessions, type LoginSessionsOptions } from "./LoginSessions.js";
import { authorizeBrowser, serveLogout } from "./browserSession.js";
import { LOGOUT_PATH, SESSION_TOKEN_PARAM } from "../../contract/browserLogin.js";
import { readBodyWithin } from "./readBodyWithin.js";
import { allowedHosts, checkApiKey, checkHost, checkOrigin, identifyApiKey } from "./requestGuards.js";
import { decodePath, parseRequestUrl } from "./requestUrl.js";
import { describeServedModel } from "./servedModelEntry.js";
import { CorsPolicy, isCorsPath } from "./corsPolicy.js";
import { requestNotes, type RequestLog } from "./RequestLog.js";
import { serveDetokenize, serveTokenize } from "./serveTokenize.js";
import { serveUi } from "./serveUi.js";
import type { Gateway } from "./gateway/serveGateway.js";
import { diskModelEntries, loadedModelMetrics, type LocalModels } from "./localModelEntries.js";
import { routedContext, type ModelRouter } from "./routeModelRequests.js";

/** llama.cpp's tokenizer endpoints, outside /v1/ as its server has them; keyed as /v1/ is. */
const tokenizerRoutes = new Set(["/tokenize", "/detokenize"]);

export const httpDefaults = {
    /** The RPC's one limit on a message (contract/limits.ts): what the WebSocket and the preload take, the API takes. */
    maxBodyBytes: rpcLimits.maxMessageBytes,
    /** Longest a chat completion may run before it is cancelled and answered with an error. */
    requestTimeoutMs: 10 * 60 * 1000,
    /**
     * Bytes of a streamed answer a client may leave unread (StreamWriter) before a local turn, which
     * cannot pause, is stopped with client_not_reading; far above what a reading client leaves behind.
     */
    maxUnreadBytes: 8 * 1024 * 1024,
    /** Chat completions in flight (running or queued in the engine) before new ones get 429. */
    maxInFlight: 64,
    /** The request line and headers must arrive within this (ms), else 408 and the connection closes. */
    headersTimeoutMs: 10_000,
    /** The whole request, body included, must arrive within this (ms), else 408; the answer's time is not part of it. */
    bodyTimeoutMs: 30_000,
    /** A request body that gains no byte, or a kept-alive connection with no next request, for this long is closed (ms). */
    idleTimeoutMs: 5_000,
    /** Open connections, WebSockets included; one more is answered 503 with Retry-After and closed. */
    maxConnections: 256,
    /** How often sessions past their lifetime are ended, their open RPC connections with them (ms); any request checks too. */
    sessionSweepIntervalMs: 60_000
} as const;

export type { EngineHealth } from "../supervisor/EngineHealth.js";

export interface KvaultHttpServerOptions {
    readonly engine: EngineClient;
    /** The default key: the RPC, `/metrics`, and the API in the plain workspace namespace (`api:<name>`). */
    readonly apiKey: string;
    /** More keys for `/v1/` only, each with a namespace of its own (ApiKeys); they can be revoked while the server runs. */
    readonly extraApiKeys?: ApiKeys;
    readonly host: string;
    readonly port: number;
    /** The id `/v1/models` lists and `model` must name; a function when the loaded model can change. */
    readonly modelId: string | (() => string);
    /** The facts of a loaded model's file (host/models/inspectModelFile.ts), for `/v1/models`; kept per path by the caller. */
    readonly modelFacts?: (modelPath: string) => Promise<ModelFacts>;
    /**
     * The built renderer to serve at `/`, behind one-time login links (LoginSessions); the API alone
     * when absent.
     */
    readonly rendererDirectory?: string;
    /** Called with each login link after the first (listen returns that one): a link was just used. */
    readonly onLoginLink?: (link: string) => void;
    /** The login sessions' lifetimes and clock (LoginSessions); a test shortens or moves them. */
    readonly loginSessions?: LoginSessionsOptions;
    readonly maxBodyBytes?: number;
    readonly requestTimeoutMs?: number;
    readonly maxUnreadBytes?: number;
    readonly maxInFlight?: number;
    /** What `/health` reports (EngineSupervisor.health); always ready when absent (an engine in process). */
    readonly health?: () => EngineHealth;
    readonly headersTimeoutMs?: number;
    readonly bodyTimeoutMs?: number;
    readonly idleTimeoutMs?: number;
    readonly maxConnections?: number;
    /** Origins (`http(s)://host[:port]`) whose pages may call the API from a browser (corsPolicy.ts); none by default. */
    readonly corsOrigins?: readonly string[];
    /** Kvault's version, said by Ollama's /api/version beside the Ollama API version. */
    readonly kvaultVersion?: string;
    /** Where each API request's line goes (RequestLog.ts): stderr in headless mode, the developer panel; none when absent. */
    readonly requestLog?: RequestLog;
    /**
     * Called for each WebSocket upgrade on `/rpc` that passed the host and origin checks and carries
     * the API key, or the session cookie and RPC token of a page of this server's own origin.
     */
    readonly onRpcUpgrade?: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
    /** Remote backends' models (`NAME/<model id>`), listed in `/v1/models` and forwarded to (host/http/gateway/). */
    readonly gateway?: Gateway;
    /**
     * The local models beside the server's own (host/supervisor/EnginePool.ts): listed in `/v1/models`,
     * `/api/tags` and `/api/ps`, and loaded by a request whose `model` names one; none when absent.
     */
    readonly models?: ModelRouter & LocalModels;
    /** The audit record as JSON Lines (host/memoryRecord/MemoryRecord.ts), served at MEMORY_RECORD_PATH to the default key; 404 when absent. */
    readonly memoryRecord?: () => Promise<string>;
}

/** Where the audit record is exported (docs/http-api.md): the default key's alone, as /metrics, since it covers every workspace. */
export const MEMORY_RECORD_PATH = "/v1/kvault/memory-record";

/**
 * Kvault's local HTTP server: the OpenAI-compatible API, `/metrics`, `/health`, the renderer and
 * the RPC WebSocket. Loopback by default; every request passes the Host check (no DNS rebinding),
 * no other origin than those of `corsOrigins` (none by default) is granted CORS, bodies are bounded in size and in time, connections are
 * capped, and every chat has a time limit.
 */
export class KvaultHttpServer {
    readonly #server: http.Server;
    readonly #httpStatusCounts: Record<string, number> = {};
    readonly #embedCounts = { embedded: 0, embed_failed: 0 };
    #allowed = new Set<string>();
    #ownOrigins = new Set<string>();
    readonly #inFlight: InFlightLimit;
    /** The browser's login sessions, once listening, when the renderer is served. */
    #sessions: LoginSessions | undefined;
    readonly #wasShed: (socket: Duplex) => boolean;
    /** What /v1/completions, /v1/embeddings and Ollama's /api/ share of the server, in-flight count included. */
    readonly #api: ApiContext;
    readonly #cors: CorsPolicy;
    /** The Responses API's answers kept for `previous_response_id`, per workspace, in memory (StoredResponses). */
    readonly #responses = new StoredResponses();
    #sessionSweep: ReturnType<typeof setInterval> | undefined;

    constructor(private readonly options: KvaultHttpServerOptions) {
        // the default key and each extra key share the places fairly (InFlightLimit)
        this.#inFlight = new InFlightLimit(
            options.maxInFlight ?? httpDefaults.maxInFlight,
            () => 1 + (options.extraApiKeys?.ids.length ?? 0)
        );
        this.#cors = new CorsPolicy(options.corsOrigins ?? []);
        this.#api = {
            engine: options.engine,
            modelId: () => this.#modelId(),
            requestTimeoutMs: options.requestTimeoutMs ?? httpDefaults.requestTimeoutMs,
            maxUnreadBytes: options.maxUnreadBytes ?? httpDefaults.maxUnreadBytes,
            readBody: (request, response) => this.#readBody(request, response),
            admit: (keyNamespace) => this.#inFlight.admit(keyNamespace),
            countEmbed: (served) => void (served ? this.#embedCounts.embedded++ : this.#embedCounts.embed_failed++),
            ...(options.modelFacts === undefined ? {} : { modelFacts: options.modelFacts }),
            ...(options.models === undefined ? {} : { localModels: options.models }),
            ...(options.kvaultVersion === undefined ? {} : { kvaultVersion: options.kvaultVersion })
        };
        const headersTimeoutMs = options.headersTimeoutMs ?? httpDefaults.headersTimeoutMs;
        const bodyTimeoutMs = options.bodyTimeoutMs ?? httpDefaults.bodyTimeoutMs;
        const idleTimeoutMs = options.idleTimeoutMs ?? httpDefaults.idleTimeoutMs;
        invariant(
            headersTimeoutMs > 0 && headersTimeoutMs <= bodyTimeoutMs && idleTimeoutMs > 0,
            `the headers timeout (${headersTimeoutMs} ms) must be positive and at most the body timeout (${bodyTimeoutMs} ms), and the idle timeout (${idleTimeoutMs} ms) positive`
        );
        this.#server = http.createServer(
            {
                headersTimeout: headersTimeoutMs,
                // Node's requestTimeout covers receiving the request only: a chat's answer streams for as long as its own limit allows.
                requestTimeout: bodyTimeoutMs,
                keepAliveTimeout: idleTimeoutMs,
                // How often Node checks those two; its default (30 s) would let a slow client hold a connection that much longer.
                connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4)))
            },
            (request, response) => void this.#handle(request, response)
        );
        this.#wasShed = limitConnections(this.#server, options.maxConnections ?? httpDefaults.maxConnections);
        this.#server.on("upgrade", (request: IncomingMessage, socket, head) => {
            if (this.#wasShed(socket)) {
                return;
            }
            try {
                this.#checkBrowserRequest(request);
                const url = parseRequestUrl(request);
                if (url.pathname !== "/rpc" || this.options.onRpcUpgrade === undefined) {
                    throw new OpenAiError(404, "Not found", "not_found_error", "not_found");
                }
                // API clients give the key (`?key=`), a page its session cookie and RPC token: a browser cannot set a WebSocket's headers.
                const key = url.searchParams.get("key");
                if (key !== null) {
                    checkApiKey({ headers: { authorization: `Bearer ${key}` } } as IncomingMessage, this.options.apiKey);
                } else {
                    const id = authorizeBrowser(request, this.#sessions, url.searchParams.get(SESSION_TOKEN_PARAM) ?? "");
                    const release = this.#sessions!.hold(id, () => socket.destroy());
                    socket.once("close", release);
                }
                this.options.onRpcUpgrade(request, socket, head);
            } catch (error) {
                const status = error instanceof OpenAiError ? error.status : 400;
                socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? "Error"}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
            }
        });
    }

    /**
     * Listens; resolves with the address actually bound (`port: 0` picks a free port) and, when it
     * serves the renderer, the first one-time login link (`<url>/?token=…`).
     */
    async listen(): Promise<{ host: string; port: number; url: string; loginLink: string | undefined }> {
        await new Promise<void>((resolve, reject) => {
            this.#server.once("error", reject);
            this.#server.listen(this.options.port, this.options.host, () => resolve());
        });
        const { port } = this.#server.address() as AddressInfo;
        this.#allowed = allowedHosts(this.options.host, port);
        this.#ownOrigins = new Set([...this.#allowed].map((host) => `http://${host}`));
        const shownHost = this.options.host.includes(":") ? `[${this.options.host}]` : this.options.host;
        const url = `http://${shownHost}:${port}`;
        if (this.options.rendererDirectory !== undefined) {
            const sessions = new LoginSessions(
                port,
                (token) => this.options.onLoginLink?.(`${url}/?token=${token}`),
                this.options.loginSessions
            );
            this.#sessions = sessions;
            this.#sessionSweep = setInterval(() => sessions.sweep(), httpDefaults.sessionSweepIntervalMs);
            this.#sessionSweep.unref();
        }
        return {
            host: this.options.host,
            port,
            url,
            loginLink: this.#sessions === undefined ? undefined : `${url}/?token=${this.#sessions.token}`
        };
    }

    async close(): Promise<void> {
        clearInterval(this.#sessionSweep);
        this.#server.closeAllConnections();
        await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    }

    #modelId(): string {
        return typeof this.options.modelId === "string" ? this.options.modelId : this.options.modelId();
    }

    #checkBrowserRequest(request: IncomingMessage): void {
        checkHost(request, this.#allowed);
        checkOrigin(request, this.#ownOrigins);
    }

    async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
        if (this.#wasShed(request.socket)) {
            return; // answered 503 when it connected
        }
        response.on("finish", () => {
            const key = String(response.statusCode);
            this.#httpStatusCounts[key] = (this.#httpStatusCounts[key] ?? 0) + 1;
        });
        this.#logWhenDone(request, response);
        setSecurityHeaders(response);
        this.#sessions?.sweep();
        try {
            checkHost(request, this.#allowed);
            const url = parseRequestUrl(request);
            // an origin on the allow-list may call the API; any other is refused, as is every origin outside the API
            const corsOrigin = this.#cors.grantedOrigin(request, url.pathname);
            if (corsOrigin === undefined) {
                checkOrigin(request, this.#ownOrigins);
            } else {
                this.#cors.allow(response, corsOrigin);
            }
            const route = `${request.method} ${url.pathname}`;
            if (request.method === "OPTIONS" && corsOrigin !== undefined) {
                return this.#cors.answerPreflight(response, corsOrigin);
            }
            if (request.method === "OPTIONS") {
                throw new OpenAiError(403, "Kvault grants no cross-origin access.", "permission_error", "cors_not_allowed");
            }
            if (route === "GET /health") {
                // 503 whenever a request sent now would not be served (starting, restarting after a crash or a
                // missed liveness ping, failed), so a monitor or a load balancer sees it; no key needed.
                const engine: EngineHealth = this.options.health?.() ?? { state: "ready", reason: "The engine runs in this process." };
                const up = canServe(engine.state);
                const compute = engineComputeOf(this.options.engine);
                return sendJson(response, up ? 200 : 503, {
                    status: up ? "ok" : engine.state,
                    ...engine,
                    ...(compute === undefined ? {} : { compute: computeFields(compute) })
                });
            }
            if (url.pathname.startsWith("/api/")) {
                // Ollama's API: the same keys as /v1/, its errors in Ollama's shape
                return await serveOllama(
                    this.#routed(response),
                    request,
                    response,
                    route,
                    () => identifyApiKey(request, response, this.options.apiKey, this.options.extraApiKeys),
                    this.options.gateway
                );
            }
            if (anthropicPaths.has(url.pathname)) {
                // Anthropic's Messages API: the same keys as /v1/, its errors in Anthropic's shape
                return await serveAnthropic(this.#routed(response), request, response, route, () =>
                    identifyApiKey(request, response, this.options.apiKey, this.options.extraApiKeys)
                );
            }
            if (url.pathname === "/metrics" || url.pathname.startsWith("/v1/") || tokenizerRoutes.has(url.pathname)) {
                // /metrics lists every workspace: the default key's alone. The API takes every key, each in its namespace.
                const { keyId } = identifyApiKey(
                    request,
                    response,
                    this.options.apiKey,
                    url.pathname === "/metrics" || url.pathname === MEMORY_RECORD_PATH ? undefined : this.options.extraApiKeys
                );
                if (route === `GET ${MEMORY_RECORD_PATH}` && this.options.memoryRecord !== undefined) {
                    return sendText(response, 200, await this.options.memoryRecord(), "application/x-ndjson; charset=utf-8");
                }
                if (route === "GET /metrics") {
                    return sendText(
                        response,
                        200,
                        prometheusMetrics(await this.options.engine.call("snapshot", {}), {
                            requests: this.#httpStatusCounts,
                            embeds: this.#embedCounts,
                            compute: engineComputeOf(this.options.engine)
                        }) + (this.options.models === undefined ? "" : await loadedModelMetrics(this.options.models)),
                        "text/plain; version=0.0.4; charset=utf-8"
                    );
                }
                if (route === "GET /v1/models") {
                    const remote = (await this.options.gateway?.modelEntries()) ?? [];
                    const local =
                        this.options.models === undefined ? [] : await diskModelEntries(this.options.models, this.options.modelFacts);
                    return sendJson(response, 200, { object: "list", data: [await this.#modelEntry(), ...local, ...remote] });
                }
                if (request.method === "GET" && url.pathname.startsWith("/v1/models/")) {
                    const asked = decodePath(url.pathname).slice("/v1/models/".length);
                    const remote =
                        this.options.gateway?.route(asked) === undefined
                            ? undefined
                            : (await this.options.gateway.modelEntries()).find((entry) => entry.id === asked);
                    if (remote !== undefined) {
                        return sendJson(response, 200, remote); // a backend's model (NAME/…), as /v1/models lists it
                    }
                    const local =
                        this.options.models === undefined
                            ? undefined
                            : (await diskModelEntries(this.options.models, this.options.modelFacts)).find((entry) => entry.id === asked);
                    if (local !== undefined) {
                        return sendJson(response, 200, local); // a model found on disk, as /v1/models lists it
                    }
                    if (asked !== this.#modelId()) {
                        throw this.#unknownModel(url.pathname.slice("/v1/models/".length));
                    }
                    return sendJson(response, 200, await this.#modelEntry());
                }
                if (route === "POST /v1/chat/completions") {
                    const api = this.#routed(response);
                    const body = await api.readBody(request, response);
                    if ((await this.options.gateway?.forward("/chat/completions", api, body, request, response, keyId)) === true) {
                        return; // a backend's model (NAME/…), forwarded
                    }
                    return await serveChatCompletion(api, body, request, response, keyId);
                }
                if (route === "POST /v1/completions") {
                    const api = this.#routed(response);
                    const body = await api.readBody(request, response);
                    if ((await this.options.gateway?.forward("/completions", api, body, request, response, keyId)) === true) {
                        return;
                    }
                    return await serveCompletion(api, body, request, response, keyId);
                }
                if (route === "POST /v1/responses") {
                    const api = this.#routed(response);
                    const body = await api.readBody(request, response);
                    return await serveResponses(api, this.#responses, body, request, response, keyId);
                }
                if (route === "POST /v1/embeddings") {
                    const api = this.#routed(response);
                    const body = await api.readBody(request, response);
                    if ((await this.options.gateway?.forward("/embeddings", api, body, request, response, keyId)) === true) {
                        return;
                    }
                    return await serveEmbeddings(api, body, response, keyId);
                }
                if (route === "POST /tokenize") {
                    return await serveTokenize(this.#routed(response), request, response, keyId);
                }
                if (route === "POST /detokenize") {
                    return await serveDetokenize(this.#routed(response), request, response, keyId);
                }
                throw new OpenAiError(404, `Unknown endpoint ${request.method} ${url.pathname}.`, "not_found_error", "unknown_url");
            }
            if (route === `POST ${LOGOUT_PATH}` && this.#sessions !== undefined) {
                return serveLogout(request, response, this.#sessions);
            }
            if (request.method === "GET" && this.options.rendererDirectory !== undefined && this.#sessions !== undefined) {
                return serveUi(request, url, response, this.options.rendererDirectory, this.#sessions);
            }
            throw new OpenAiError(404, `Nothing at ${url.pathname}.`, "not_found_error", "not_found");
        } catch (error) {
            const failure = error instanceof OpenAiError ? error : fromEngineError(error);
            if (!response.headersSent) {
                sendError(response, failure);
            } else {
                response.end();
            }
        }
    }

    /** One line in the request log for an API request, once its answer is sent or its connection closed. */
    #logWhenDone(request: IncomingMessage, response: ServerResponse): void {
        const log = this.options.requestLog;
        const pathname = (request.url ?? "").split("?")[0] ?? "";
        if (log === undefined || !isCorsPath(pathname) || request.method === "OPTIONS") {
            return;
        }
        const arrived = new Date();
        const startedAt = performance.now();
        response.once("close", () => {
            const facts = requestNotes(response);
            const status = response.headersSent ? response.statusCode : 0;
            const outcome = facts.outcome ?? (!response.writableFinished ? "closed" : status < 400 ? "ok" : `http_${status}`);
            log.add({
                time: arrived.toISOString(),
                endpoint: `${request.method} ${pathname.slice(0, 200)}`,
                workspace: facts.workspace ?? null,
                promptTokens: facts.promptTokens ?? null,
                completionTokens: facts.completionTokens ?? null,
                status,
                outcome,
                ms: Math.round(performance.now() - startedAt),
                ...(facts.prompt === undefined ? {} : { prompt: facts.prompt })
            });
        });
    }

    /** The JSON body, bounded in bytes and in time (readBodyWithin). */
    #readBody(request: IncomingMessage, response: ServerResponse): Promise<unknown> {
        return readBodyWithin(
            request,
            response,
            this.options.maxBodyBytes ?? httpDefaults.maxBodyBytes,
            this.options.idleTimeoutMs ?? httpDefaults.idleTimeoutMs
        );
    }

    /** The API's context for one request: its engine the model its body names (routeModelRequests.ts). */
    #routed(response: ServerResponse): ApiContext {
        return routedContext(this.#api, this.options.models, response);
    }

    #modelEntry(): Promise<Record<string, unknown>> {
        return describeServedModel(this.#modelId(), this.options.engine.info, this.options.modelFacts);
    }

    #unknownModel(model: string): OpenAiError {
        return new OpenAiError(
            404,
            `The model "${model.slice(0, 200)}" does not exist here. This server runs "${this.#modelId()}" (GET /v1/models).`,
            "not_found_error",
            "model_not_found",
            "model"
        );
    }
}
