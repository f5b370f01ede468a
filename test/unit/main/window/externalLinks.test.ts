// Links out of the app: http(s) only, only after the user has seen the address and agreed.
import { describe, expect, it } from "vitest";
import type { externalLinkDialog } from "../../../../main/window/externalLinks.js";
import { externalLinkTarget, openExternalLink, type ExternalLinkDeps } from "../../../../main/window/externalLinks.js";

type MessageBoxOptions = ReturnType<typeof externalLinkDialog>;

function deps(response: number, openFails = false): ExternalLinkDeps & { asked: MessageBoxOptions[]; opened: string[]; logged: string[] } {
    const asked: MessageBoxOptions[] = [];
    const opened: string[] = [];
    const logged: string[] = [];
    return {
        asked,
        opened,
        logged,
        showMessageBox: async (options) => (asked.push(options), { response }),
        openExternal: async (url) => {
            if (openFails) {
                throw new Error("no browser");
            }
            opened.push(url);
        },
        log: (line) => void logged.push(line)
    };
}

describe("externalLinkTarget", () => {
    it("lets http and https out, normalized", () => {
        expect(externalLinkTarget("https://huggingface.co/models?search=llama")).toBe("https://huggingface.co/models?search=llama");
        expect(externalLinkTarget("HTTP://Example.COM")).toBe("http://example.com/");
    });

    it("keeps everything else in: other schemes, no host, credentials, garbage", () => {
        for (const url of [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "ms-msdt:/id PCWDiagnostic",
            "vscode://file/x",
            "mailto:a@b.c",
            "https://user:pass@example.com/",
            "http://",
            "not a url"
        ]) {
            expect(externalLinkTarget(url), url).toBeUndefined();
        }
    });
});

describe("openExternalLink", () => {
    it("shows the whole address, with Cancel as the default, and opens only on yes", async () => {
        const yes = deps(0);
        expect(await openExternalLink("https://github.com/withcatai/node-llama-cpp/issues/1", yes)).toBe("opened");
        expect(yes.opened).toEqual(["https://github.com/withcatai/node-llama-cpp/issues/1"]);
        expect(yes.asked[0]).toMatchObject({
            message: "Open github.com in your browser?",
            detail: "https://github.com/withcatai/node-llama-cpp/issues/1",
            buttons: ["Open in Browser", "Cancel"],
            defaultId: 1,
            cancelId: 1
        });

        const no = deps(1);
        expect(await openExternalLink("https://example.com/", no)).toBe("declined");
        expect(no.opened).toEqual([]);
    });

    it("refuses other schemes without asking, and reports a browser that would not open", async () => {
        const asked = deps(0);
        expect(await openExternalLink("file:///etc/passwd", asked)).toBe("refused");
        expect(asked.asked).toEqual([]);
        expect(asked.logged[0]).toMatch(/only http and https links open in the browser/);

        const broken = deps(0, true);
        expect(await openExternalLink("https://example.com/", broken)).toBe("failed");
        expect(broken.logged).toEqual(["The browser could not open https://example.com/ (no browser)."]);
    });
});
