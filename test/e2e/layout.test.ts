import { describe, expect, it } from "vitest";
import { readApp, sendMessage, storedWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

const longName = "Research notes on paged KV caches, handoffs and isolation between workspaces";

// What tends to push a narrow page sideways: a wide table, a long line of code, a long address.
const wideAnswer = [
    "| Preset | Layers | Heads | Context | File | Use |",
    "|---|---|---|---|---|---|",
    "| tiny | 2 | 4 | 512 | 0.9 MB | tests and the demo |",
    "| small | 12 | 12 | 2048 | 250 MB | CPU benchmarks |",
    "",
    "```sh",
    "npm run serve -- --port 0 --model models/small.gguf --context 8192 --decode-sequences 4 --page-tokens 16",
    "```",
    "",
    "See https://example.invalid/a/very/long/address/that/does/not/break/anywhere/on/its/own/and/keeps/going."
].join("\n");

describe("the layout at every width, in a real browser", () => {
    const kvault = useKvaultApp({
        viewport: { width: 1280, height: 820 },
        seed: [
            {
                id: "ui-layout",
                name: "Layout",
                colour: 0,
                messages: [
                    { role: "user", content: "What are the model presets?" },
                    { role: "assistant", content: wideAnswer }
                ]
            },
            { id: "ui-long-name", name: longName, colour: 3, messages: [] }
        ]
    });
    const screenshots = kvault.screenshots;

    /** How far the page, and the chat inside it, scroll sideways (0 when nothing overflows). */
    const overflow = (): Promise<{ page: number; chat: number }> =>
        kvault.app().page.evaluate(`({
            page: document.scrollingElement.scrollWidth - innerWidth,
            chat: (() => { const list = document.querySelector(".message-list"); return list.scrollWidth - list.clientWidth; })()
        })`);
    const visible = (selector: string): Promise<boolean> => kvault.app().page.locator(selector).isVisible();
    const focused = (): Promise<string | null> => kvault.app().page.evaluate(`document.activeElement?.getAttribute("aria-label") ?? null`);
    const rightEdge = async (selector: string): Promise<number> => {
        const box = await kvault.app().page.locator(selector).boundingBox();
        return Math.round(box!.x + box!.width);
    };
    /** The Chats tab's label's width: shown beside its icon on a wide window, read out but not shown on a narrow one. */
    const railLabelWidth = async (): Promise<number> =>
        (await kvault.app().page.locator("#rail-chats .view-rail-label").boundingBox())?.width ?? 0;
    const resize = async (width: number, height: number): Promise<void> => {
        await kvault.app().page.setViewportSize({ width, height });
        await expect.poll(() => kvault.app().page.evaluate<number>("innerWidth")).toBe(width);
    };

    it("at 1280 px: the rail with its labels, workspaces and chat side by side, long names cut short with the whole name in the title", async () => {
        const { page } = kvault.app();
        await resize(1280, 820);
        expect(await overflow()).toEqual({ page: 0, chat: 0 });
        expect(await visible(".view-rail")).toBe(true);
        expect(await railLabelWidth(), "icons with labels").toBeGreaterThan(20);
        expect(await visible(".shell-sidebar")).toBe(true);
        expect(await visible(".chat-view")).toBe(true);
        expect(await visible(".page-map-canvas"), "the page map is a view of its own").toBe(false);
        expect(await page.locator(".drawer-toggle").evaluateAll((buttons) => buttons.map((button) => button.checkVisibility()))).toEqual([
            false
        ]);

        const item = page.locator(`.workspace-item[data-workspace-id="ui-long-name"]`);
        expect(await item.getAttribute("aria-label")).toBe(longName);
        const name = item.locator(".workspace-item-name");
        expect(await name.getAttribute("title")).toBe(longName);
        expect(await name.evaluate((element) => element.scrollWidth > element.clientWidth), "cut short").toBe(true);
        screenshots.push(await kvault.app().screenshot("layout-1280"));
        expect(kvault.app().problems).toEqual([]);
    });

    it("at 720 px: the rail is a strip of icons, the workspace list a drawer, opened and closed from the header, by button, Esc and the backdrop", async () => {
        const { page } = kvault.app();
        await resize(720, 800);
        await expect.poll(() => visible(".shell-sidebar")).toBe(false);
        expect(await visible(".view-rail")).toBe(true);
        expect(await railLabelWidth(), "icons alone (the label only read out)").toBeLessThanOrEqual(1);
        expect(await overflow()).toEqual({ page: 0, chat: 0 });
        expect(await page.getByRole("button", { name: "Send message" }).isVisible()).toBe(true);
        const showWorkspaces = page.getByRole("button", { name: "Show the workspace list" });
        expect(await showWorkspaces.getAttribute("aria-expanded")).toBe("false");
        expect(await showWorkspaces.getAttribute("aria-controls")).toBe("drawer-workspaces");
        screenshots.push(await kvault.app().screenshot("layout-720"));

        await showWorkspaces.click();
        await expect.poll(() => visible(".shell-sidebar")).toBe(true);
        expect(await page.getByRole("button", { name: "Hide the workspace list" }).getAttribute("aria-expanded")).toBe("true");
        expect(await focused()).toBe("Close the workspace list");
        expect(await page.locator(`.workspace-item[data-workspace-id="ui-long-name"] .workspace-item-name`).getAttribute("title")).toBe(
            longName
        );
        await expect.poll(() => rightEdge(".shell-sidebar")).toBe(300); // slid all the way in
        expect(await overflow()).toEqual({ page: 0, chat: 0 });
        screenshots.push(await kvault.app().screenshot("layout-720-workspaces"));
        await page.keyboard.press("Escape");
        await expect.poll(() => visible(".shell-sidebar")).toBe(false);
        expect(await focused()).toBe("Show the workspace list");

        await showWorkspaces.click();
        await expect.poll(() => visible(".shell-sidebar")).toBe(true);
        await expect.poll(() => rightEdge(".shell-sidebar")).toBe(300);
        await page.mouse.click(600, 400); // the backdrop, beside the drawer
        await expect.poll(() => visible(".shell-sidebar")).toBe(false);
        expect(await focused()).toBe("Show the workspace list");

        await showWorkspaces.click();
        await expect.poll(() => visible(".shell-sidebar")).toBe(true);
        await page.getByRole("button", { name: "Close the workspace list" }).click();
        await expect.poll(() => visible(".shell-sidebar")).toBe(false);

        // The engine's panels are views: the page map fills the window's width, nothing scrolls sideways.
        await page.getByRole("tab", { name: "Memory" }).click();
        await expect.poll(() => visible(".page-map-canvas")).toBe(true);
        await expect.poll(() => rightEdge(".memory-view-map")).toBeGreaterThan(680);
        expect(await page.evaluate<number>("document.scrollingElement.scrollWidth - innerWidth")).toBe(0);
        screenshots.push(await kvault.app().screenshot("layout-720-memory"));
        await page.getByRole("tab", { name: "Chats" }).click();
        expect(kvault.app().problems).toEqual([]);
    });

    it("at 390 px: the chat is usable (messages, message box, Send), nothing scrolls sideways, and the drawers still work", async () => {
        const { page } = kvault.app();
        await resize(390, 844);
        await expect.poll(() => overflow()).toEqual({ page: 0, chat: 0 });
        const send = await page.getByRole("button", { name: "Send message" }).boundingBox();
        const box = await page.getByLabel("Message", { exact: true }).boundingBox();
        expect(send!.x + send!.width).toBeLessThanOrEqual(390);
        expect(box!.width).toBeGreaterThan(250);
        const answer = await page.locator(".message-assistant .message-text").boundingBox();
        expect(answer!.width, "an answer keeps most of the width").toBeGreaterThan(300);
        // The wide table and the long command scroll inside the answer, not the page.
        expect(await page.locator(".md-table-scroll").evaluate((element) => element.scrollWidth > element.clientWidth)).toBe(true);
        expect(await page.locator(".md-code").evaluate((element) => element.scrollWidth > element.clientWidth)).toBe(true);
        screenshots.push(await kvault.app().screenshot("layout-390"));

        // Choosing a workspace in the drawer closes it and shows that chat, its long name cut short.
        await page.getByRole("button", { name: "Show the workspace list" }).click();
        await expect.poll(() => visible(".shell-sidebar")).toBe(true);
        await expect.poll(() => rightEdge(".shell-sidebar")).toBe(300); // slid all the way in
        await page.locator(`.workspace-item[data-workspace-id="ui-long-name"]`).click();
        await expect.poll(() => visible(".shell-sidebar")).toBe(false);
        const title = page.locator(".workspace-title");
        expect(await title.getAttribute("title")).toBe(longName);
        expect(await title.evaluate((element) => element.scrollWidth > element.clientWidth), "cut short").toBe(true);
        expect(await overflow()).toEqual({ page: 0, chat: 0 });

        await page.getByRole("button", { name: "Show the workspace list" }).click();
        await page.locator(`.workspace-item[data-workspace-id="ui-layout"]`).click();
        await expect.poll(() => visible(".shell-sidebar")).toBe(false);
        await sendMessage(page, "And on a phone?");
        await expect
            .poll(async () => (await storedWorkspaces(page)).find((workspace) => workspace.id === "ui-layout")?.messages.length, {
                timeout: 120_000,
                interval: 250
            })
            .toBe(4);
        await expect.poll(async () => (await readApp(page)).items.find((item) => item.id === "ui-layout")?.numMessages).toBe(4);
        expect(await overflow()).toEqual({ page: 0, chat: 0 });

        // Every view fits the width: the rail's icons all on screen, each view's content inside the window.
        const tabs = await page
            .getByRole("tab")
            .evaluateAll((elements) => elements.map((element) => element.getBoundingClientRect().right));
        expect(tabs).toHaveLength(6);
        expect(Math.max(...tabs)).toBeLessThanOrEqual(390);
        for (const name of ["Models", "Memory", "Isolation", "Server", "Settings"]) {
            await page.getByRole("tab", { name }).click();
            await page.getByRole("tabpanel", { name }).waitFor({ state: "visible" });
            expect(await page.evaluate<number>("document.scrollingElement.scrollWidth - innerWidth"), name).toBe(0);
            expect((await page.getByRole("tabpanel", { name }).boundingBox())!.width, name).toBeLessThanOrEqual(390);
        }
        screenshots.push(await kvault.app().screenshot("layout-390-settings"));
        await page.getByRole("tab", { name: "Chats" }).click();
        expect(await overflow()).toEqual({ page: 0, chat: 0 });
        expect(kvault.app().problems).toEqual([]);
    });
});
