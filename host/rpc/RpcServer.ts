import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { MAX_DOWNLOAD_SOURCE_CHARS } from "../../contract/models.js";
import { MAX_MODEL_PATH_CHARS, rpcMethods, type RpcMethod, type RpcServerMessage } from "../../contract/rpc.js";
import { commandLimits } from "../../engine/index.js";
import type { EngineClient } from "../supervisor/EngineClient.js";
import { isStoreMethod, parseStoreCall } from "../store/parseStoreCall.js";
import { noWorkspaceStore, serveStoreCall } from "../store/serveStoreCall.js";
import type { WorkspaceStore } from "../store/WorkspaceStore.js";

/** Largest RPC message accepted; a chat carries its whole history. */
const MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * The renderer's RPC over a WebSocket (headless mode). Every message is parsed defensively: a bad
 * one is answered with an error and changes nothing. A connection that closes cancels its turns:
 * a client going away frees its pages.
 */
export class RpcServer {
    readonly #server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });

    /** `store` resolves to the workspaces' store, or rejects with why there is none (every store call answers with that). */
    constructor(
        private readonly engine: EngineClient,
        private readonly store: () => Promise<WorkspaceStore> = noWorkspaceStore
    ) {
        this.#server.on("connection", (socket: WebSocket) => this.#serve(socket));
    }

    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
        this.#server.handleUpgrade(request, socket, head, (webSocket) => this.#server.emit("connection", webSocket, request));
    }

    async close(): Promise<void> {
        for (const client of this.#server.clients) {
            client.terminate();
        }
        await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    }

    #serve(socket: WebSocket): void {
        const turns = new Map<string, AbortController>();
        const send = (message: RpcServerMessage): void => {
            if (socket.readyState === socket.OPEN) {
                socket.send(JSON.stringify(message));
            }
        };
        socket.on("close", () => {
            for (const controller of turns.values()) {
                controller.abort();
            }
        });
        socket.on("message", (data, isBinary) => {
            let id: number | null = null;
            try {
                if (isBinary) {
                    throw rpcError("invalid_request", "RPC messages are JSON text.");
                }
                const message: unknown = JSON.parse(String(data));
                if (typeof message !== "object" || message === null || Array.isArray(message)) {
                    throw rpcError("invalid_request", "An RPC message is a JSON object with id, method and params.");
                }
                const { id: rawId, method, params } = message as Record<string, unknown>;
                if (typeof rawId !== "number" || !Number.isSafeInteger(rawId)) {
                    throw rpcError("invalid_request", "id must be an integer.");
                }
                id = rawId;
                if (typeof method !== "string" || !rpcMethods.includes(method as RpcMethod)) {
                    throw rpcError("invalid_request", `Unknown method; use one of ${rpcMethods.join(", ")}.`);
                }
                const input =
                    typeof params === "object" && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
                const callId = id;
                this.#call(method as RpcMethod, input, turns, send).then(
                    (result) => send({ id: callId, result }),
                    (error: unknown) => send({ id: callId, error: toPayload(error) })
                );
            } catch (error) {
                send({ id, error: toPayload(error) });
            }
        });
    }

    async #call(
        method: RpcMethod,
        params: Record<string, unknown>,
        turns: Map<string, AbortController>,
        send: (message: RpcServerMessage) => void
    ): Promise<unknown> {
        if (isStoreMethod(method)) {
            const call = parseStoreCall(method, params);
            return serveStoreCall(await this.store(), call);
        }
        switch (method) {
            case "info":
                return this.engine.info();
            case "snapshot":
                return this.engine.snapshot();
            case "measure":
                if (typeof params.workspace !== "string" || typeof params.draft !== "string" || !Array.isArray(params.messages)) {
                    throw rpcError("invalid_request", "measure takes workspace (string), messages (array) and draft (string).");
                }
                return this.engine.measure(params.workspace, params.messages as never, params.draft);
            case "forgetWorkspace":
                if (typeof params.workspace !== "string") {
                    throw rpcError("invalid_request", "forgetWorkspace takes workspace (string).");
                }
                await this.engine.forgetWorkspace(params.workspace);
                return {};
            case "audit":
                return this.engine.audit();
            case "replayableTurns":
                return this.engine.replayableTurns();
            case "listDrills":
                return this.engine.listDrills();
            case "replay":
                if (!isId(params.requestId)) {
                    throw rpcError("invalid_request", `replay takes requestId (a string of 1 to ${commandLimits.maxIdChars} characters).`);
                }
                return this.engine.replay(params.requestId);
            case "runDrill":
                if (!isId(params.id)) {
                    throw rpcError(
                        "invalid_request",
                        `runDrill takes id (a string of 1 to ${commandLimits.maxIdChars} characters), one of listDrills' ids.`
                    );
                }
                return this.engine.runDrill(params.id);
            case "runCanary":
                if (
                    params.fillerTokens !== undefined &&
                    !(typeof params.fillerTokens === "number" && Number.isSafeInteger(params.fillerTokens) && params.fillerTokens >= 1)
                ) {
                    throw rpcError("invalid_request", "runCanary takes nothing, or fillerTokens (a whole number of at least 1).");
                }
                return this.engine.runCanary(params.fillerTokens === undefined ? {} : { fillerTokens: params.fillerTokens });
            case "inspectModel":
                if (!isModelPath(params.path)) {
                    throw rpcError("invalid_request", `inspectModel takes path (a string of 1 to ${MAX_MODEL_PATH_CHARS} characters).`);
                }
                return this.engine.inspectModel(params.path);
            case "switchModel":
                if (!isModelPath(params.model)) {
                    throw rpcError(
                        "invalid_request",
                        `switchModel takes model (a GGUF path or "tiny", 1 to ${MAX_MODEL_PATH_CHARS} characters).`
                    );
                }
                return this.engine.switchModel(params.model);
            case "startDownload":
                if (typeof params.source !== "string" || params.source.length === 0 || params.source.length > MAX_DOWNLOAD_SOURCE_CHARS) {
                    throw rpcError(
                        "invalid_request",
                        `startDownload takes source (an http(s) URL or an hf: reference, 1 to ${MAX_DOWNLOAD_SOURCE_CHARS} characters).`
                    );
                }
                return this.engine.startDownload(params.source);
            case "listDownloads":
                return this.engine.listDownloads();
            case "cancelDownload":
                if (!isId(params.id)) {
                    throw rpcError(
                        "invalid_request",
                        `cancelDownload takes id (a string of 1 to ${commandLimits.maxIdChars} characters), one of listDownloads' ids.`
                    );
                }
                return this.engine.cancelDownload(params.id);
            case "resumeDownload":
                if (!isId(params.id)) {
                    throw rpcError(
                        "invalid_request",
                        `resumeDownload takes id (a string of 1 to ${commandLimits.maxIdChars} characters), one of listDownloads' ids.`
                    );
                }
                return this.engine.resumeDownload(params.id);
            case "listModels":
                return this.engine.listModels();
            case "forgetModel":
                if (!isId(params.id) || (params.deleteFile !== undefined && typeof params.deleteFile !== "boolean")) {
                    throw rpcError(
                        "invalid_request",
                        `forgetModel takes id (a string of 1 to ${commandLimits.maxIdChars} characters, one of listModels' ids) and deleteFile (true or false, optional).`
                    );
                }
                return this.engine.forgetModel(params.id, params.deleteFile === true);
            case "cancel": {
                const controller = typeof params.requestId === "string" ? turns.get(params.requestId) : undefined;
                controller?.abort();
                return { cancelled: controller !== undefined };
            }
            case "chat": {
                const requestId = params.requestId;
                if (typeof requestId !== "string" || requestId === "" || turns.has(requestId)) {
                    throw rpcError("invalid_request", "chat needs a requestId (string) not already running on this connection.");
                }
                const controller = new AbortController();
                turns.set(requestId, controller);
                try {
                    // The engine validates the rest of the turn (validateChatTurn) before anything runs.
                    return await this.engine.chat(
                        params as never,
                        {
                            onQueued: (position) => send({ event: "queued", requestId, position }),
                            onStarted: () => send({ event: "started", requestId }),
                            onText: (text) => send({ event: "text", requestId, text })
                        },
                        controller.signal
                    );
                } finally {
                    turns.delete(requestId);
                }
            }
        }
    }
}

function isId(value: unknown): value is string {
    return typeof value === "string" && value.length > 0 && value.length <= commandLimits.maxIdChars;
}

function isModelPath(value: unknown): value is string {
    return typeof value === "string" && value.length > 0 && value.length <= MAX_MODEL_PATH_CHARS;
}

function rpcError(code: string, message: string): Error & { code: string } {
    return Object.assign(new Error(message), { code });
}

function toPayload(error: unknown): { code: string; message: string } {
    const code =
        typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : "internal_error";
    return { code, message: error instanceof Error ? error.message : String(error) };
}
