import { app, ipcMain, type IpcMainInvokeEvent, type WebContents } from "electron";
import { channels, rpcChannels } from "../../contract/channels.js";
import type { AppInfo, AppSettingsView, BridgeResult } from "../../contract/KvaultBridge.js";
import { rpcMethods } from "../../contract/rpc.js";
import type { SettingsService } from "../settings/SettingsService.js";
import { assertTrustedSender } from "./assertTrustedSender.js";
import type { RendererRpc, RpcCaller } from "./RendererRpc.js";
import { toBridgeError } from "./toBridgeError.js";

export interface IpcServices {
    /** The URL the app window loads; only its top frame may call. */
    readonly appUrl: string;
    readonly rpc: RendererRpc;
    readonly settings: SettingsService;
}

/**
 * Registers the host side of every call in contract/; once per app run. Each handler checks the
 * sender and the argument count first, then hands the payload to a pure module that validates it.
 * An untrusted call is rejected outright; everything else answers with a BridgeResult.
 */
export function registerIpcHandlers({ appUrl, rpc, settings }: IpcServices): void {
    const watched = new Set<number>();

    /** The caller for a webContents; on first sight, its turns are tied to its page's life. */
    const callerOf = (sender: WebContents): RpcCaller => {
        const { id } = sender;
        if (!watched.has(id)) {
            watched.add(id);
            // Whoever started a turn can no longer hear it or stop it: cancel it, so its pages are freed.
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
                    sender.send(channels.turnEvent, event);
                }
            }
        };
    };

    const handle = <T>(channel: string, numArgs: number, serve: (event: IpcMainInvokeEvent, args: unknown[]) => T): void => {
        ipcMain.handle(channel, (event, ...args: unknown[]) => {
            assertTrustedSender(event, appUrl, args, numArgs);
            return serve(event, args);
        });
    };

    handle(channels.getAppInfo, 0, (): AppInfo => ({ version: app.getVersion(), platform: process.platform }));

    for (const method of rpcMethods) {
        handle(rpcChannels[method], 1, (event, [params]) => rpc.call(callerOf(event.sender), method, params));
    }

    handle(channels.getSettings, 0, (): BridgeResult<AppSettingsView> => ({ ok: true, value: settings.view() }));
    handle(channels.setLocalApi, 1, async (_event, [change]): Promise<BridgeResult<AppSettingsView>> => {
        try {
            return { ok: true, value: await settings.setLocalApi(change) };
        } catch (error) {
            return { ok: false, error: toBridgeError(error) };
        }
    });
}
