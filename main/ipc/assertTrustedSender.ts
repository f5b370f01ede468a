import type { IpcMainInvokeEvent } from "electron";
import { isAllowedNavigation } from "../window/windowOptions";

/**
 * Throws unless the call comes from a frame showing this app's own page and carries exactly
 * `numArgs` arguments. Every ipcMain handler calls this first: a frame that navigated
 * elsewhere, or a page that got hold of the bridge, must not reach the host.
 */
export function assertTrustedSender(event: IpcMainInvokeEvent, appUrl: string, args: readonly unknown[], numArgs: number): void {
    const frameUrl = event.senderFrame?.url ?? "";
    if (!isAllowedNavigation(frameUrl, appUrl)) {
        throw new Error(`IPC call refused: sender ${JSON.stringify(frameUrl)} is not the app (${appUrl}).`);
    }
    if (args.length !== numArgs) {
        throw new Error(`IPC call refused: expected ${numArgs} argument(s), got ${args.length}.`);
    }
}
