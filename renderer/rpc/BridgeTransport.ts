import type { KvaultBridge } from "../../contract/KvaultBridge.js";
import type { RpcRequest } from "../../contract/rpc.js";
import type { RpcTransport, RpcTransportHandlers } from "./RpcTransport.js";

/**
 * The RPC over Electron's preload (`window.kvault`): each request becomes the named bridge call,
 * its `BridgeResult` the `{id, result}` or `{id, error}` the WebSocket would have sent, and turn
 * events arrive as they do there. The rest of the renderer cannot tell the hosts apart.
 */
export class BridgeTransport implements RpcTransport {
    #handlers: RpcTransportHandlers | undefined;
    #unsubscribe: (() => void) | undefined;
    #disposed = false;

    constructor(private readonly bridge: KvaultBridge) {}

    start(handlers: RpcTransportHandlers): void {
        this.#handlers = handlers;
        this.#unsubscribe = this.bridge.onTurnEvent((event) => handlers.onMessage(event));
        handlers.onOpen();
    }

    send(request: RpcRequest): boolean {
        if (this.#disposed || this.#handlers === undefined) {
            return false;
        }
        const handlers = this.#handlers;
        this.#call(request).then(
            (answer) => {
                if (!this.#disposed) {
                    handlers.onMessage(answer.ok ? { id: request.id, result: answer.value } : { id: request.id, error: answer.error });
                }
            },
            (error: unknown) => {
                if (!this.#disposed) {
                    handlers.onMessage({
                        id: request.id,
                        error: { code: "bridge_refused", message: error instanceof Error ? error.message : String(error) }
                    });
                }
            }
        );
        return true;
    }

    dispose(): void {
        if (this.#disposed) {
            return;
        }
        this.#disposed = true;
        this.#unsubscribe?.();
        this.#handlers?.onClose(false, 0);
    }

    #call(request: RpcRequest): Promise<{ ok: true; value: unknown } | { ok: false; error: { code: string; message: string } }> {
        switch (request.method) {
            case "info":
                return this.bridge.info();
            case "chat":
                return this.bridge.chat(request.params);
            case "cancel":
                return this.bridge.cancel(request.params.requestId);
            case "measure":
                return this.bridge.measure(request.params.workspace, request.params.messages, request.params.draft);
            case "snapshot":
                return this.bridge.snapshot();
            case "forgetWorkspace":
                return this.bridge.forgetWorkspace(request.params.workspace);
            case "audit":
                return this.bridge.audit();
            case "replayableTurns":
                return this.bridge.replayableTurns();
            case "replay":
                return this.bridge.replay(request.params.requestId);
            case "listDrills":
                return this.bridge.listDrills();
            case "runDrill":
                return this.bridge.runDrill(request.params.id);
            case "runCanary":
                return this.bridge.runCanary(request.params);
            case "inspectModel":
                return this.bridge.inspectModel(request.params.path);
            case "switchModel":
                return this.bridge.switchModel(request.params.model);
            case "startDownload":
                return this.bridge.startDownload(request.params.source);
            case "listDownloads":
                return this.bridge.listDownloads();
            case "cancelDownload":
                return this.bridge.cancelDownload(request.params.id);
            case "resumeDownload":
                return this.bridge.resumeDownload(request.params.id);
            case "listModels":
                return this.bridge.listModels();
            case "forgetModel":
                return this.bridge.forgetModel(request.params.id, request.params.deleteFile === true);
            case "loadWorkspaces":
                return this.bridge.loadWorkspaces();
            case "importWorkspaces":
                return this.bridge.importWorkspaces(request.params.document);
            case "saveWorkspace":
                return this.bridge.saveWorkspace(request.params.workspace);
            case "removeWorkspace":
                return this.bridge.removeWorkspace(request.params.workspace);
            case "selectWorkspace":
                return this.bridge.selectWorkspace(request.params.workspace);
            case "appendMessage":
                return this.bridge.appendMessage(request.params.workspace, request.params.message);
            case "dropLastAnswer":
                return this.bridge.dropLastAnswer(request.params.workspace, request.params.messageId);
            case "clearChat":
                return this.bridge.clearChat(request.params.workspace);
        }
    }
}
