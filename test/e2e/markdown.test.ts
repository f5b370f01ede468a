import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectWorkspace } from "./support/appDriver.js";
import { screenshotDirectory } from "./support/openKvault.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// Stored chats whose answers have what a model's Markdown has: a table, highlighted code, a task
// list, a link, and, in a second workspace, the untrusted parts (raw HTML, an image, a
// javascript: link) that must stay inert. Every address in them is this file's own loopback
// server, which logs what it is asked.
const code = [
    "// Greets each workspace by name.",
    "function greet(name: string): string {",
    "    return `Hello, ${name}!`;",
    "}",
    'const names = ["Drafts", "Notes"];'
].join("\n");

const answer = (base: string): string =>
    [
        "## Models compared",
        "",
        "| Model | Parameters | File |",
        "|:------|-----------:|-----:|",
        "| tiny | 0.2 M | 0.9 MB |",
        "| small | 125 M | 250 MB |",
        "| 1b | 1.2 B | 2.5 GB |",
        "",
        "```ts",
        code,
        "```",
        "",
        "1. Load a model",
        "   1. from a file",
        "   2. or by URL",
        "2. Send a message",
        "",
        "- [x] tables",
        "- [ ] ~~pictures~~ links only",
        "",
        `The [release notes](${base}/notes?from=chat) say more.`
    ].join("\n");

const untrusted = (base: string): string =>
    `<img src="${base}/pixel.png?raw"> ![a pixel](${base}/pixel.png?markdown) [run me](javascript:alert(document.domain)) <script>alert(1)</script>`;

describe("Markdown answers in a real browser", () => {
    const requests: { url: string; referer: string | undefined }[] = [];
    const target = http.createServer((request, response) => {
        requests.push({ url: request.url ?? "", referer: request.headers.referer });
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        response.end("<!doctype html><title>Link target</title><p>The link's page.</p>");
    });
    const dialogs: string[] = [];
    let base = "";

    // Registered before the app's hooks: the link target listens before the chats name it, and closes after the app.
    beforeAll(async () => {
        await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
        base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
        await new Promise<void>((resolve) => target.close(() => resolve()));
    });

    const kvault = useKvaultApp({
        seed: () => [
            {
                id: "ui-markdown",
                name: "Markdown",
                colour: 2,
                messages: [
                    { role: "user", content: "Compare the models in a table, and **show** the code." },
                    { role: "assistant", content: answer(base) }
                ]
            },
            {
                id: "ui-untrusted",
                name: "Untrusted",
                colour: 5,
                messages: [
                    { role: "user", content: "Show me HTML, an image and a script." },
                    { role: "assistant", content: untrusted(base) }
                ]
            }
        ],
        viewport: { width: 1280, height: 1000 },
        prepare: async (app) => {
            app.page.on("dialog", (dialog) => {
                dialogs.push(dialog.message());
                void dialog.dismiss();
            });
            await app.page.locator(".message-assistant .md-table-scroll").waitFor();
        }
    });
    const { screenshots } = kvault;

    it("shows a stored answer's table with its columns aligned, headings, nested lists and a task list", async () => {
        const { page } = kvault.app();
        const answerItem = page.locator(".message-assistant");
        const table = answerItem.locator(".md-table-scroll table");
        expect(await table.locator("th").allTextContents()).toEqual(["Model", "Parameters", "File"]);
        expect(await table.locator("tbody tr").evaluateAll((rows) => rows.map((row) => row.textContent))).toEqual([
            "tiny0.2 M0.9 MB",
            "small125 M250 MB",
            "1b1.2 B2.5 GB"
        ]);
        expect(
            await page.evaluate(
                `[...document.querySelectorAll(".message-assistant .md-table-scroll tbody tr:first-child td")].map((cell) => getComputedStyle(cell).textAlign)`
            )
        ).toEqual(["left", "right", "right"]);
        expect(await answerItem.getByRole("heading", { name: "Models compared" }).evaluate((heading) => heading.tagName)).toBe("H4");
        expect(await answerItem.locator("ol > li > ol > li").allTextContents()).toEqual(["from a file", "or by URL"]);
        expect(await answerItem.locator("ol:not(li ol) > li").count()).toBe(2);
        expect(await answerItem.getByRole("checkbox", { name: "Done", exact: true }).isChecked()).toBe(true);
        expect(await answerItem.getByRole("checkbox", { name: "Not done" }).isChecked()).toBe(false);
        expect(await answerItem.locator("del").textContent()).toBe("pictures");
        // The user's own message is Markdown too.
        expect(await page.locator(".message-user strong").textContent()).toBe("show");

        await table.scrollIntoViewIfNeeded();
        screenshots.push(await kvault.app().screenshot("markdown-table"));
        expect(kvault.app().problems).toEqual([]);
    });

    it("highlights the code block, and its Copy button copies exactly the code", async () => {
        const { page } = kvault.app();
        const block = page.locator('.message-assistant .md-code-block[data-language="ts"]');
        expect(await block.locator(".md-code-language").textContent()).toBe("ts");
        expect(await block.locator("code.hljs.language-ts").textContent()).toBe(`${code}\n`);
        expect(await block.locator(".hljs-keyword").allTextContents()).toEqual(expect.arrayContaining(["function", "return", "const"]));
        expect(await block.locator(".hljs-comment").textContent()).toBe("// Greets each workspace by name.");
        // Highlighted: the theme's colours, not the text colour.
        const colours = await page.evaluate<Record<string, string>>(`(() => {
            const block = document.querySelector('.message-assistant .md-code-block[data-language="ts"]');
            const colour = (selector) => getComputedStyle(block.querySelector(selector)).color;
            return { keyword: colour(".hljs-keyword"), string: colour(".hljs-string"), text: colour("code") };
        })()`);
        expect(colours.keyword).toBe("rgb(207, 34, 46)");
        expect(colours.string).toBe("rgb(10, 48, 105)");
        expect(new Set(Object.values(colours)).size).toBe(3);

        const copy = block.getByRole("button", { name: "Copy the ts code" });
        await copy.click();
        await expect.poll(() => copy.textContent()).toBe("Copied");
        expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(code);
        const file = path.join(screenshotDirectory, "markdown-code.png");
        await page.locator(".message-assistant").screenshot({ path: file });
        screenshots.push(file);
        expect(kvault.app().problems).toEqual([]);
    });

    it("keeps an answer's raw HTML, its image and its javascript: link inert", async () => {
        const { page } = kvault.app();
        await selectWorkspace(page, "Untrusted");
        const answerItem = page.locator(".message-assistant");
        expect(await answerItem.locator("img, script, iframe").count()).toBe(0);
        const text = (await answerItem.locator(".message-text").textContent()) ?? "";
        expect(text).toContain(`<img src="${base}/pixel.png?raw">`);
        expect(text).toContain("<script>alert(1)</script>");
        const image = answerItem.getByRole("link", { name: "Image: a pixel" });
        expect(await image.getAttribute("href")).toBe(`${base}/pixel.png?markdown`);
        expect(await answerItem.locator('a[href^="javascript"]').count()).toBe(0);
        const refused = answerItem.locator(".md-link-refused");
        expect(await refused.textContent()).toBe("run me (not a web address: javascript:alert(document.domain))");
        await refused.click();
        expect(
            requests.filter((request) => request.url.startsWith("/pixel.png")),
            "no image was fetched"
        ).toEqual([]);
        expect(dialogs, "no script ran").toEqual([]);
        expect(kvault.app().problems).toEqual([]);
        await selectWorkspace(page, "Markdown");
    });

    it("opens a link in a new tab only after the user has seen its whole address and said yes, without opener or referrer", async () => {
        const { page, context } = kvault.app();
        const address = `${base}/notes?from=chat`;
        const link = page.locator(".message-assistant").getByRole("link", { name: "release notes" });
        expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
        const confirm = page.getByRole("dialog", { name: `Open 127.0.0.1:${new URL(base).port} in a new tab?` });

        await link.click();
        await confirm.waitFor();
        expect(await confirm.locator(".link-confirm-address").textContent()).toBe(address);
        expect(await page.evaluate("document.activeElement?.textContent")).toBe("Cancel");
        await confirm.getByRole("button", { name: "Cancel, do not open the link" }).click();
        await confirm.waitFor({ state: "detached" });

        await link.click();
        await confirm.waitFor();
        await page.keyboard.press("Escape");
        await confirm.waitFor({ state: "detached" });
        expect(context.pages(), "nothing opened").toHaveLength(1);
        expect(
            requests.filter((request) => request.url.startsWith("/notes")),
            "nothing fetched"
        ).toEqual([]);

        await link.click();
        const opened = context.waitForEvent("page");
        await confirm.getByRole("button", { name: "Open in a new tab" }).click();
        const tab = await opened;
        await tab.waitForLoadState("load");
        expect(tab.url()).toBe(address);
        expect(await tab.title()).toBe("Link target");
        expect(await tab.evaluate("window.opener")).toBeNull();
        expect(requests.filter((request) => request.url.startsWith("/notes"))).toEqual([{ url: "/notes?from=chat", referer: undefined }]);
        await tab.close();
        expect(await confirm.count()).toBe(0);
        expect(kvault.app().problems).toEqual([]);
    });
});
