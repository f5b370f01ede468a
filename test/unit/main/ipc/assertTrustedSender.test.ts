import { describe, expect, it } from "vitest";
import { InvalidRequestError } from "../../../../engine/request/requestErrors.js";
import { assertTrustedSender, UntrustedSenderError, type SenderEvent } from "../../../../main/ipc/assertTrustedSender.js";

const fileAppUrl = "file:///opt/Kvault/resources/app.asar/out/renderer/index.html";
const devAppUrl = "http://localhost:5173/";

/** An invoke event as ipcMain gives it, reduced to what the check reads. */
function eventFrom(url: string | null, options: { subframe?: boolean } = {}): SenderEvent {
    if (url === null) {
        return { senderFrame: null } as unknown as SenderEvent;
    }
    const top = { url, parent: null };
    return { senderFrame: options.subframe === true ? { url, parent: top } : top } as unknown as SenderEvent;
}

function refusal(event: SenderEvent, appUrl: string, args: unknown[], numArgs: number): unknown {
    try {
        assertTrustedSender(event, appUrl, args, numArgs);
    } catch (error) {
        return error;
    }
    return undefined;
}

describe("assertTrustedSender", () => {
    it("lets the app's own top frame through, with the right number of arguments", () => {
        expect(() => assertTrustedSender(eventFrom(fileAppUrl), fileAppUrl, [{}], 1)).not.toThrow();
        expect(() => assertTrustedSender(eventFrom(`${fileAppUrl}#/workspace/2`), fileAppUrl, [], 0)).not.toThrow();
        expect(() => assertTrustedSender(eventFrom("http://localhost:5173/settings"), devAppUrl, [], 0)).not.toThrow();
    });

    it.each([
        ["another page on disk", "file:///home/eve/evil.html", fileAppUrl],
        ["a remote page", "https://example.com/", fileAppUrl],
        ["another dev-server origin", "http://localhost:5174/", devAppUrl],
        ["a data: URL", "data:text/html,<script>kvault.chat()</script>", fileAppUrl],
        ["about:blank", "about:blank", fileAppUrl],
        ["an empty URL", "", fileAppUrl]
    ])("refuses %s with untrusted_sender", (_, url, appUrl) => {
        const error = refusal(eventFrom(url), appUrl, [], 0);
        expect(error).toBeInstanceOf(UntrustedSenderError);
        expect((error as UntrustedSenderError).code).toBe("untrusted_sender");
    });

    it("refuses a frame that is gone (senderFrame null after a navigation)", () => {
        expect(refusal(eventFrom(null), fileAppUrl, [], 0)).toBeInstanceOf(UntrustedSenderError);
    });

    it("refuses a subframe, even one showing the app's URL", () => {
        const error = refusal(eventFrom(fileAppUrl, { subframe: true }), fileAppUrl, [], 0);
        expect(error).toBeInstanceOf(UntrustedSenderError);
        expect((error as Error).message).toMatch(/subframe/);
    });

    it("checks the sender before the arguments: a stranger learns nothing about the call", () => {
        expect(refusal(eventFrom("https://example.com/"), fileAppUrl, [1, 2, 3], 0)).toBeInstanceOf(UntrustedSenderError);
    });

    it.each([
        ["too many", [{}, {}], 1],
        ["too few", [], 1],
        ["any at all for a call that takes none", [{}], 0]
    ])("refuses %s arguments with invalid_request", (_, args, numArgs) => {
        const error = refusal(eventFrom(fileAppUrl), fileAppUrl, args, numArgs);
        expect(error).toBeInstanceOf(InvalidRequestError);
        expect((error as InvalidRequestError).code).toBe("invalid_request");
    });

    it("quotes at most 200 characters of a hostile URL", () => {
        const error = refusal(eventFrom(`https://example.com/${"a".repeat(10_000)}`), fileAppUrl, [], 0) as Error;
        expect(error.message.length).toBeLessThan(400);
    });
});
