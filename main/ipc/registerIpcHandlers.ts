import { app, ipcMain, type WebContents } from "electron";
import { ipcChannels } from "../../contract/channels.js";
import type { AppInfo } from "../../contract/KvaultBridge.js";
import type { RpcCaller, RpcDispatcher } from "../../host/rpc/RpcDispatcher.js";
import { assertTrustedSender } from "./assertTrustedSender.js";

export interface IpcServices {
    /** The URL the app window loads; only its top frame may call. */
    readonly appUrl: string;
    /** The RPC's one server loop, the headless server's too: it checks every call against the spec. */
    readonly rpc: RpcDispatcher;
}

/**
 * Registers the host side of the bridge (contract/KvaultBridge.ts); once per app run. Two channels:
 * `call` carries every RPC method to the dispatcher, `getAppInfo` answers here. Each handler checks
 * the sender and the argument count first; an untrusted call is rejected outright, everything
 * else answers with an RpcAnswer.
 */
export function registerIpcHandlers({ appUrl, rpc }: IpcServices): void {
    const watched = new Set<number>();

    /** The caller for a webContents; on first sight, its turns are tied to its page's life. */
    const callerOf = (sender: WebContents): RpcCaller => {
        const { id } = sender;
        if (!watched.has(id)) {
            watched.add(id);
            // Whoever started a turn can no longer hear it or stop it: cancel its own turns, so their pages are
            // freed (a chat's turn is the host's and runs on: host/rpc/HostTurns.ts).
            sender.once("destroyed", () => {
                rpc.closeCaller(id);
                watched.delete(id);
            });
            sender.on("render-process-gone", () => rpc.closeCaller(id));
            // 'did-navigate' (committed, main frame), not 'did-start-navigation': a navigation that
            // will-navigate then blocks, such as a link in a reply, must not cancel anything.
            sender.on("did-navigate", () => rpc.closeCaller(id));
        }
        return {
            id,
            send: (event) => {
                if (!sender.isDestroyed()) {
                    sender.send(ipcChannels.turnEvent, event);
                }
            }
        };
    };

    ipcMain.handle(ipcChannels.call, (event, ...args: unknown[]) => {
        assertTrustedSender(event, appUrl, args, 2);
        const [method, params] = args;
        return rpc.call(callerOf(event.sender), method, params);
    });
    ipcMain.handle(ipcChannels.getAppInfo, (event, ...args: unknown[]): AppInfo => {
        assertTrustedSender(event, appUrl, args, 0);
        return { version: app.getVersion(), platform: process.platform };
    });
}
