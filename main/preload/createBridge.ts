// Pure on purpose (electron's types only): the bridge is built from an ipcRenderer handed in,
// so tests check with a fake one what each function sends.
import type { IpcRenderer, IpcRendererEvent } from "electron";
import { APP_COMMAND_EVENT, parseAppCommand } from "../../contract/appCommands.js";
import { ipcChannels } from "../../contract/channels.js";
import type { AppCommandListener, AppInfo, BridgeResult, KvaultBridge, TurnListener } from "../../contract/KvaultBridge.js";
import { MESSAGE_TOO_LARGE, oversizeMessage, utf8ByteLength } from "../../contract/limits.js";
import type { TurnEvent } from "../../contract/turnEvents.js";

/** The three ipcRenderer calls the bridge makes; nothing else of it is reachable from the page. */
export type BridgeIpc = Pick<IpcRenderer, "invoke" | "on" | "removeListener">;

/**
 * The API exposed as `window.kvault`: four named functions. `call` forwards a method's name and
 * its params on the one RPC channel, after the same size check as the WebSocket's (rpcLimits in
 * contract/limits.ts): main checks everything else against the spec. Results are RpcAnswers
 * (see contract/KvaultBridge.ts for why failures are values).
 */
export function createBridge(ipc: BridgeIpc): KvaultBridge {
    return {
        getAppInfo: () => ipc.invoke(ipcChannels.getAppInfo) as Promise<AppInfo>,

        call: (method, params) => {
            if (typeof method !== "string") {
                return Promise.reject(new TypeError("call takes a method name (a string) and its params."));
            }
            let numBytes: number;
            try {
                numBytes = utf8ByteLength(JSON.stringify(params) ?? "");
            } catch (error) {
                return Promise.resolve(refusal("invalid_request", `${method}'s params cannot be sent: ${(error as Error).message}`));
            }
            const tooLarge = oversizeMessage(numBytes);
            if (tooLarge !== undefined) {
                return Promise.resolve(refusal(MESSAGE_TOO_LARGE, tooLarge));
            }
            return ipc.invoke(ipcChannels.call, method, params) as Promise<BridgeResult<unknown>>;
        },

        onTurnEvent: (listener: TurnListener) => {
            if (typeof listener !== "function") {
                throw new TypeError("onTurnEvent takes a function.");
            }
            // The IPC event stays here: it carries a sender handle the page must never get.
            const forward = (_event: IpcRendererEvent, turnEvent: TurnEvent): void => void listener(turnEvent);
            ipc.on(ipcChannels.turnEvent, forward);
            return () => {
                ipc.removeListener(ipcChannels.turnEvent, forward);
            };
        },

        onAppCommand: (listener: AppCommandListener) => {
            if (typeof listener !== "function") {
                throw new TypeError("onAppCommand takes a function.");
            }
            // Checked here, in the isolated world: the page only ever sees a well-formed command, and never the IPC event.
            const forward = (_event: IpcRendererEvent, value: unknown): void => {
                const command = parseAppCommand(value);
                if (command === undefined) {
                    console.warn(`Kvault dropped a malformed menu command from main: ${describeDropped(value)}.`);
                    return;
                }
                listener(command);
            };
            ipc.on(APP_COMMAND_EVENT, forward);
            return () => {
                ipc.removeListener(APP_COMMAND_EVENT, forward);
            };
        }
    };
}

/** At most 200 characters of what was dropped, for the console. */
function describeDropped(value: unknown): string {
    let text: string;
    try {
        text = JSON.stringify(value) ?? String(value);
    } catch {
        text = Object.prototype.toString.call(value);
    }
    return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function refusal(code: string, message: string): BridgeResult<never> {
    return { ok: false, error: { code, message } };
}
