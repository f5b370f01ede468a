import type { IpcMainInvokeEvent } from "electron";
import { InvalidRequestError, KvaultError } from "../../engine/index.js";
import { isAllowedNavigation } from "../window/windowOptions.js";

/** The call came from somewhere other than the app's own top-level page; nothing was done. */
export class UntrustedSenderError extends KvaultError {
    readonly code = "untrusted_sender";
}

/** The parts of an invoke event the check reads; tests pass plain objects of this shape. */
export type SenderEvent = Pick<IpcMainInvokeEvent, "senderFrame">;

/**
 * Throws unless the call comes from the top frame of a page showing this app and carries exactly
 * `numArgs` arguments. Every ipcMain handler calls this first: a frame that navigated elsewhere,
 * a subframe, or a page that got hold of the bridge must not reach the host. Pure apart from
 * reading the event: electron is imported for its types only.
 */
export function assertTrustedSender(event: SenderEvent, appUrl: string, args: readonly unknown[], numArgs: number): void {
    const frame = event.senderFrame;
    const frameUrl = frame?.url ?? "";
    if (frame === null || frame === undefined || !isAllowedNavigation(frameUrl, appUrl)) {
        throw new UntrustedSenderError(`IPC call refused: sender ${JSON.stringify(frameUrl.slice(0, 200))} is not the app (${appUrl}).`);
    }
    // The production CSP loads no frames; this holds even if a future one does.
    if (frame.parent !== null) {
        throw new UntrustedSenderError(
            `IPC call refused: sender ${JSON.stringify(frameUrl.slice(0, 200))} is a subframe, not the app's page.`
        );
    }
    if (args.length !== numArgs) {
        throw new InvalidRequestError(`IPC call refused: expected ${numArgs} argument(s), got ${args.length}.`);
    }
}
