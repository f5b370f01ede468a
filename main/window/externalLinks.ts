// Pure on purpose (electron's types only): links out of the app. Only http and https leave, and
// only once the user has seen the whole address and said yes; every other scheme (file:,
// javascript:, custom protocol handlers that launch programs) is refused without asking.
import type { MessageBoxOptions, MessageBoxReturnValue } from "electron";

/** The part of Electron's dialog and shell modules this uses; the real ones are assignable to it. */
export interface ExternalLinkDeps {
    showMessageBox(options: MessageBoxOptions): Promise<Pick<MessageBoxReturnValue, "response">>;
    openExternal(url: string): Promise<void>;
    log(line: string): void;
}

export type ExternalLinkOutcome = "opened" | "declined" | "refused" | "failed";

/** The URL to hand the system browser, or undefined when it must not leave: not http(s), no host, or credentials in it. */
export function externalLinkTarget(url: string): string | undefined {
    let parsed: URL;
    try {
        parsed = new URL(url);
    } catch {
        return undefined;
    }
    if (
        (parsed.protocol !== "http:" && parsed.protocol !== "https:") ||
        parsed.hostname === "" ||
        parsed.username !== "" ||
        parsed.password !== ""
    ) {
        return undefined;
    }
    return parsed.href;
}

/** The confirmation: the full address in the detail, Cancel as the default and the Escape answer. */
export function externalLinkDialog(target: string): MessageBoxOptions {
    return {
        type: "question",
        buttons: ["Open in Browser", "Cancel"],
        defaultId: 1,
        cancelId: 1,
        noLink: true,
        title: "Open link",
        message: `Open ${new URL(target).host} in your browser?`,
        detail: target
    };
}

/** Asks, then opens `url` in the system browser; what happened, as a value. */
export async function openExternalLink(url: string, deps: ExternalLinkDeps): Promise<ExternalLinkOutcome> {
    const target = externalLinkTarget(url);
    if (target === undefined) {
        deps.log(`Refused to open ${url.slice(0, 200)} outside the app: only http and https links open in the browser.`);
        return "refused";
    }
    const { response } = await deps.showMessageBox(externalLinkDialog(target));
    if (response !== 0) {
        return "declined";
    }
    try {
        await deps.openExternal(target);
        return "opened";
    } catch (error) {
        deps.log(`The browser could not open ${target} (${(error as Error).message}).`);
        return "failed";
    }
}
