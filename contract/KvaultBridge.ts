// The API the preload exposes to the renderer as `window.kvault`. Only named calls cross
// the bridge; the renderer never sees ipcRenderer. The RPC calls are those of
// contract/rpc.ts, the same the headless host serves over its WebSocket.

import type { ChatMessage, ChatTurnRequest, EngineErrorPayload } from "./engineProtocol.js";
import type { RpcMethods, RpcTurnEvent } from "./rpc.js";
import type { StoredMessage, WorkspaceMeta } from "./workspaces.js";

export interface AppInfo {
    /** The app's version from package.json, e.g. "0.1.0". */
    readonly version: string;
    /** Node's `process.platform` of the host, e.g. "darwin", "win32", "linux". */
    readonly platform: string;
}

/**
 * What every call but getAppInfo resolves with. A failure is a value, not a rejection, because
 * Electron keeps only an Error's message across IPC and the context bridge: the stable `code`
 * (context_length_exceeded, engine_crashed, invalid_request, …) would be lost. A rejection means
 * the call itself was refused (an untrusted sender, a broken bridge), never an engine outcome.
 */
export type BridgeResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: EngineErrorPayload };

/** The OpenAI-compatible API on 127.0.0.1, as the settings page shows it. */
export interface LocalApiView {
    readonly enabled: boolean;
    readonly port: number;
    /** The bearer key clients must send; stored in the settings file. */
    readonly apiKey: string;
    /** Where it serves, e.g. "http://127.0.0.1:8080"; null while it is off or could not start. */
    readonly url: string | null;
    /** Why it is enabled but not serving (say, the port was taken when Kvault started); null otherwise. */
    readonly problem: EngineErrorPayload | null;
}

export interface AppSettingsView {
    readonly localApi: LocalApiView;
    /** The GGUF the engine loads; null for the built-in demo model. */
    readonly modelPath: string | null;
}

/** Switches the local API; the settings change only if the server could be brought to that state. */
export interface LocalApiChange {
    readonly enabled: boolean;
    /** 1024 to 65535: ports below need administrator rights on most systems. */
    readonly port: number;
}

export type TurnEventListener = (event: RpcTurnEvent) => void;

export interface KvaultBridge {
    getAppInfo(): Promise<AppInfo>;

    info(): Promise<BridgeResult<RpcMethods["info"]["result"]>>;
    /** Resolves when the turn ends; its queued/started/text events arrive through onTurnEvent meanwhile. */
    chat(request: ChatTurnRequest): Promise<BridgeResult<RpcMethods["chat"]["result"]>>;
    /** Cancels a turn this window started; `cancelled` is false when none by that id is running. */
    cancel(requestId: string): Promise<BridgeResult<RpcMethods["cancel"]["result"]>>;
    measure(workspace: string, messages: readonly ChatMessage[], draft: string): Promise<BridgeResult<RpcMethods["measure"]["result"]>>;
    snapshot(): Promise<BridgeResult<RpcMethods["snapshot"]["result"]>>;
    forgetWorkspace(workspace: string): Promise<BridgeResult<RpcMethods["forgetWorkspace"]["result"]>>;
    /** I1–I7 over the whole engine, now. */
    audit(): Promise<BridgeResult<RpcMethods["audit"]["result"]>>;
    replayableTurns(): Promise<BridgeResult<RpcMethods["replayableTurns"]["result"]>>;
    /** Differential replay of a finished greedy turn, by the requestId it was sent with. */
    replay(requestId: string): Promise<BridgeResult<RpcMethods["replay"]["result"]>>;
    listDrills(): Promise<BridgeResult<RpcMethods["listDrills"]["result"]>>;
    /** Runs a fault drill in sandboxed engines; takes seconds. */
    runDrill(id: string): Promise<BridgeResult<RpcMethods["runDrill"]["result"]>>;
    /** The canary probe on the loaded model, in two temporary workspaces; takes tens of seconds. */
    runCanary(params: RpcMethods["runCanary"]["params"]): Promise<BridgeResult<RpcMethods["runCanary"]["result"]>>;
    /** A GGUF file's facts and memory estimate, without loading it. */
    inspectModel(path: string): Promise<BridgeResult<RpcMethods["inspectModel"]["result"]>>;
    /** Loads another model (a path, or "tiny"); running turns end with model_switched. */
    switchModel(model: string): Promise<BridgeResult<RpcMethods["switchModel"]["result"]>>;
    /** Starts downloading a model (an http(s) URL or an hf: reference) into the app's models directory. */
    startDownload(source: string): Promise<BridgeResult<RpcMethods["startDownload"]["result"]>>;
    listDownloads(): Promise<BridgeResult<RpcMethods["listDownloads"]["result"]>>;
    /** Cancels a running download; its partial file is deleted. */
    cancelDownload(id: string): Promise<BridgeResult<RpcMethods["cancelDownload"]["result"]>>;
    /** Continues a failed download from its partial file. */
    resumeDownload(id: string): Promise<BridgeResult<RpcMethods["resumeDownload"]["result"]>>;
    /** The model library: models opened or downloaded, with their facts. */
    listModels(): Promise<BridgeResult<RpcMethods["listModels"]["result"]>>;
    /** Removes a library entry; with deleteFile, a downloaded model's file too. */
    forgetModel(id: string, deleteFile: boolean): Promise<BridgeResult<RpcMethods["forgetModel"]["result"]>>;
    /** The workspaces and chats kept on disk, with what was set aside as damaged at start. */
    loadWorkspaces(): Promise<BridgeResult<RpcMethods["loadWorkspaces"]["result"]>>;
    /** Hands the old localStorage document over once; the host takes it only while it has no workspaces. */
    importWorkspaces(document: string): Promise<BridgeResult<RpcMethods["importWorkspaces"]["result"]>>;
    saveWorkspace(workspace: WorkspaceMeta): Promise<BridgeResult<RpcMethods["saveWorkspace"]["result"]>>;
    removeWorkspace(workspace: string): Promise<BridgeResult<RpcMethods["removeWorkspace"]["result"]>>;
    selectWorkspace(workspace: string): Promise<BridgeResult<RpcMethods["selectWorkspace"]["result"]>>;
    appendMessage(workspace: string, message: StoredMessage): Promise<BridgeResult<RpcMethods["appendMessage"]["result"]>>;
    dropLastAnswer(workspace: string, messageId: string): Promise<BridgeResult<RpcMethods["dropLastAnswer"]["result"]>>;
    clearChat(workspace: string): Promise<BridgeResult<RpcMethods["clearChat"]["result"]>>;
    /** Turn events of this window's chats only; returns the function that stops them. */
    onTurnEvent(listener: TurnEventListener): () => void;

    getSettings(): Promise<BridgeResult<AppSettingsView>>;
    /** Resolves once the API serves (or has stopped); a port in use is an error, and nothing changes. */
    setLocalApi(change: LocalApiChange): Promise<BridgeResult<AppSettingsView>>;
}
