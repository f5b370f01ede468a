// Pure on purpose (no electron): the renderer's RPC as Electron main serves it, the same calls as
// host/rpc/RpcServer.ts serves over a WebSocket. registerIpcHandlers binds it to ipcMain; tests
// drive it with a fake engine and fake windows.
import type { BridgeResult } from "../../contract/KvaultBridge.js";
import type { RpcTurnEvent } from "../../contract/rpc.js";
import { CancelledBeforeSendError } from "../../host/supervisor/engineHostErrors.js";
import { InvalidRequestError } from "../../engine/index.js";
import type { EngineClient } from "../../host/supervisor/EngineClient.js";
import { isStoreCall } from "../../host/store/parseStoreCall.js";
import { noWorkspaceStore, serveStoreCall } from "../../host/store/serveStoreCall.js";
import type { WorkspaceStore } from "../../host/store/WorkspaceStore.js";
import { toBridgeError } from "./toBridgeError.js";
import { validateRpcPayload, type RpcCall } from "./validateRpcPayload.js";

/** One renderer (a webContents): turn events go to it, and only to it. */
export interface RpcCaller {
    /** Stable for the caller's life (webContents.id). */
    readonly id: number;
    /** Must not throw for a caller that has gone away; events for it are dropped. */
    send(event: RpcTurnEvent): void;
}

/**
 * Serves each call of a renderer: validates the payload, waits for the engine if it is still
 * starting, and answers with a BridgeResult. A caller's turns are its own: only it can cancel
 * them, only it hears their events, and `closeCaller` (its window closed or reloaded) cancels
 * them all, which frees their pages.
 */
export class RendererRpc {
    /** Per caller id: its running turns by requestId. */
    readonly #turns = new Map<number, Map<string, AbortController>>();

    /**
     * `engine` resolves once the engine is ready, or rejects with why it could not start; `store`
     * likewise for the workspaces' store. Store calls never wait for the engine.
     */
    constructor(
        private readonly engine: () => Promise<EngineClient>,
        private readonly store: () => Promise<WorkspaceStore> = noWorkspaceStore
    ) {}

    async call(caller: RpcCaller, method: unknown, params: unknown): Promise<BridgeResult<unknown>> {
        try {
            return { ok: true, value: await this.#run(caller, validateRpcPayload(method, params)) };
        } catch (error) {
            return { ok: false, error: toBridgeError(error) };
        }
    }

    /** Cancels every turn the caller has running; idempotent. */
    closeCaller(callerId: number): void {
        const turns = this.#turns.get(callerId);
        this.#turns.delete(callerId);
        for (const controller of turns?.values() ?? []) {
            controller.abort();
        }
    }

    /** Turns running for this caller; for tests and diagnostics. */
    numTurns(callerId: number): number {
        return this.#turns.get(callerId)?.size ?? 0;
    }

    async #run(caller: RpcCaller, call: RpcCall): Promise<unknown> {
        if (isStoreCall(call)) {
            return serveStoreCall(await this.store(), call);
        }
        switch (call.method) {
            case "cancel": {
                // No engine wait: a turn that exists already has one, and cancelling none needs none.
                const controller = this.#turns.get(caller.id)?.get(call.params.requestId);
                controller?.abort();
                return { cancelled: controller !== undefined };
            }
            case "chat":
                return this.#chat(caller, call.params);
            case "info":
                return (await this.engine()).info();
            case "snapshot":
                return (await this.engine()).snapshot();
            case "measure": {
                const { workspace, messages, draft } = call.params;
                return (await this.engine()).measure(workspace, messages, draft);
            }
            case "forgetWorkspace":
                await (await this.engine()).forgetWorkspace(call.params.workspace);
                return {};
            case "audit":
                return (await this.engine()).audit();
            case "replayableTurns":
                return (await this.engine()).replayableTurns();
            case "replay":
                return (await this.engine()).replay(call.params.requestId);
            case "listDrills":
                return (await this.engine()).listDrills();
            case "runDrill":
                return (await this.engine()).runDrill(call.params.id);
            case "runCanary":
                return (await this.engine()).runCanary(call.params);
            case "inspectModel":
                return (await this.engine()).inspectModel(call.params.path);
            case "switchModel":
                return (await this.engine()).switchModel(call.params.model);
            case "startDownload":
                return (await this.engine()).startDownload(call.params.source);
            case "listDownloads":
                return (await this.engine()).listDownloads();
            case "cancelDownload":
                return (await this.engine()).cancelDownload(call.params.id);
            case "resumeDownload":
                return (await this.engine()).resumeDownload(call.params.id);
            case "listModels":
                return (await this.engine()).listModels();
            case "forgetModel":
                return (await this.engine()).forgetModel(call.params.id, call.params.deleteFile === true);
        }
    }

    async #chat(caller: RpcCaller, request: Extract<RpcCall, { method: "chat" }>["params"]): Promise<unknown> {
        const { requestId } = request;
        let turns = this.#turns.get(caller.id);
        if (turns?.has(requestId)) {
            throw new InvalidRequestError(
                `A turn with requestId ${JSON.stringify(requestId)} is already running in this window; give each turn its own id.`
            );
        }
        if (turns === undefined) {
            turns = new Map();
            this.#turns.set(caller.id, turns);
        }
        // Registered before the engine wait, so a turn cancelled while the engine starts never runs.
        const controller = new AbortController();
        turns.set(requestId, controller);
        try {
            const engine = await untilAborted(this.engine(), controller.signal);
            return await engine.chat(
                request,
                {
                    onQueued: (position) => caller.send({ event: "queued", requestId, position }),
                    onStarted: () => caller.send({ event: "started", requestId }),
                    onText: (text) => caller.send({ event: "text", requestId, text })
                },
                controller.signal
            );
        } finally {
            // Only this turn's entry: after closeCaller the map may be a newer one for the same caller.
            const current = this.#turns.get(caller.id);
            if (current?.get(requestId) === controller) {
                current.delete(requestId);
                if (current.size === 0) {
                    this.#turns.delete(caller.id);
                }
            }
        }
    }
}

/** `promise`, or CancelledBeforeSendError as soon as `signal` aborts: a cancelled turn does not wait for the engine to start. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
    return new Promise((resolve, reject) => {
        const abort = (): void => reject(new CancelledBeforeSendError());
        if (signal.aborted) {
            abort();
            return;
        }
        signal.addEventListener("abort", abort, { once: true });
        promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
    });
}
