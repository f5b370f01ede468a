// The API the preload exposes to the renderer as `window.kvault`: four named functions, never
// ipcRenderer itself. `call` carries every method of contract/rpc/rpcSpec.ts, the same
// the headless host serves over its WebSocket.

import type { AppCommand } from "./appCommands.js";
import type { RpcAnswer } from "./rpc.js";
import type { TurnListener } from "./turnEvents.js";

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
export type BridgeResult<T> = RpcAnswer<T>;

export type { TurnListener } from "./turnEvents.js";

/** Hears each menu command main sends this window (contract/appCommands.ts), already checked. */
export type AppCommandListener = (command: AppCommand) => void;

export interface KvaultBridge {
    getAppInfo(): Promise<AppInfo>;
    /**
     * One RPC call, by method name (contract/rpc/rpcSpec.ts); main checks the params against the
     * spec. A chat resolves when the turn ends; its events arrive through onTurnEvent meanwhile.
     */
    call(method: string, params: unknown): Promise<BridgeResult<unknown>>;
    /** Turn events of this window's chats only; returns the function that stops them. */
    onTurnEvent(listener: TurnListener): () => void;
    /**
     * The application menu's commands for this window (New Workspace, Find, Open Model…), each
     * checked with parseAppCommand first: a malformed one is dropped, never half-applied. Returns
     * the function that stops them.
     */
    onAppCommand(listener: AppCommandListener): () => void;
}
