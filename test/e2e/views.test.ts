// The app's views as LM Studio and Jan users expect them: a rail (Chats, Models, Memory, Isolation,
// Server, Settings), each view reachable by keyboard, the page map given the whole Memory view, the
// model named (and switchable) in the chat's header, themes and the shortcuts dialog.
import { describe, expect, it } from "vitest";
import { openView, readApp, type ViewName } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

const VIEWS: readonly ViewName[] = ["Chats", "Models", "Memory", "Isolation", "Server", "Settings"];

describe("the app's views in a real browser", () => {
    const kvault = useKvaultApp({
        viewport: { width: 1280, height: 820 },
        seed: [
            {
                id: "views-pages",
                name: "Paged memory",
                colour: 0,
                messages: [
                    { role: "user", content: "What is a page?" },
                    { role: "assistant", content: "A page holds the KV of a fixed number of token positions." }
                ]
            },
            { id: "views-notes", name: "Notes", colour: 3, messages: [] }
        ]
    });
    const screenshots = kvault.screenshots;

    const shownView = (): Promise<string | null> =>
        kvault.app().page.evaluate(`document.querySelector('[role="tabpanel"]:not([hidden])')?.getAttribute("aria-label") ?? null`);
    const focusedTab = (): Promise<string | null> =>
        kvault.app().page.evaluate(`document.activeElement?.getAttribute("role") === "tab" ? document.activeElement.textContent : null`);

    it("shows one view at a time from the rail, and every view at 1280 and 720 px", async () => {
        const { page } = kvault.app();
        expect(await page.getByRole("tab").allTextContents()).toEqual(VIEWS);
        expect(await shownView()).toBe("Chats");
        for (const width of [1280, 720]) {
            await page.setViewportSize({ width, height: width === 1280 ? 820 : 800 });
            for (const name of VIEWS) {
                await openView(page, name);
                expect(await shownView()).toBe(name);
                expect(await page.getByRole("tab", { name, exact: true }).getAttribute("aria-selected")).toBe("true");
                expect(await page.evaluate<number>("document.scrollingElement.scrollWidth - innerWidth"), `${name} at ${width}`).toBe(0);
                screenshots.push(await kvault.app().screenshot(`view-${name.toLowerCase()}-${width}`));
            }
        }
        await page.setViewportSize({ width: 1280, height: 820 });
        await openView(page, "Chats");
        // The panels moved into the views, none lost: MCP servers and the engine in Settings, the backends and requests in Server.
        expect(await page.locator("#view-settings #mcp-heading").textContent()).toBe("MCP servers");
        expect(await page.locator('#view-server section[aria-labelledby="backends-heading"]').count()).toBe(1);
        expect(await page.locator("#view-server .request-log-panel").count()).toBe(1);
        expect(await page.locator("#view-isolation .isolation-panel").count()).toBe(1);
        expect(kvault.app().problems).toEqual([]);
    });

    it("moves between views by keyboard: arrows, Home and End on the rail, Alt+digit anywhere", async () => {
        const { page } = kvault.app();
        await page.getByRole("tab", { name: "Chats" }).focus();
        await page.keyboard.press("ArrowDown");
        expect([await shownView(), await focusedTab()]).toEqual(["Models", "Models"]);
        await page.keyboard.press("ArrowDown");
        expect([await shownView(), await focusedTab()]).toEqual(["Memory", "Memory"]);
        await page.keyboard.press("End");
        expect([await shownView(), await focusedTab()]).toEqual(["Settings", "Settings"]);
        await page.keyboard.press("ArrowDown"); // wraps round
        expect([await shownView(), await focusedTab()]).toEqual(["Chats", "Chats"]);
        await page.keyboard.press("ArrowUp");
        expect(await shownView()).toBe("Settings");
        await page.keyboard.press("Home");
        expect(await shownView()).toBe("Chats");
        // One tab stop: Tab leaves the rail rather than walking through its six buttons.
        expect(await page.getByRole("tab").evaluateAll((tabs) => tabs.map((tab) => tab.getAttribute("tabindex")))).toEqual([
            "0",
            "-1",
            "-1",
            "-1",
            "-1",
            "-1"
        ]);

        await page.keyboard.press("Alt+4");
        expect(await shownView()).toBe("Isolation");
        await page.keyboard.press("Alt+3");
        expect(await shownView()).toBe("Memory");
        await page.keyboard.press("Alt+1");
        expect(await shownView()).toBe("Chats");
        expect(kvault.app().problems).toEqual([]);
    });

    it("gives the page map most of the window in the Memory view, its owner table whole below it", async () => {
        const { page } = kvault.app();
        await openView(page, "Memory");
        await page.locator(".page-map-canvas").first().waitFor({ state: "visible", timeout: 30_000 });
        const measured = await page.evaluate<{
            window: number;
            map: number;
            canvases: number;
            view: number;
            viewHeight: number;
            height: number;
        }>(`(() => {
            const box = (selector) => document.querySelector(selector).getBoundingClientRect();
            const canvases = [...document.querySelectorAll("#view-memory .page-map-canvas")].map((canvas) => canvas.getBoundingClientRect().width);
            return { window: innerWidth, height: innerHeight, map: box(".memory-view-map").width, canvases: Math.min(...canvases),
                view: box("#view-memory").width, viewHeight: box("#view-memory").height };
        })()`);
        // The side column gave it 330 of 1,280 pixels (26 %): now the whole view, rail aside.
        expect(measured.map / measured.window).toBeGreaterThan(0.75);
        expect(measured.canvases / measured.window).toBeGreaterThan(0.75);
        expect((measured.view * measured.viewHeight) / (measured.window * measured.height)).toBeGreaterThan(0.75);
        // The owner table is not cut off: scrolled to, its last row is inside the window.
        const lastRow = page.locator(".page-owner-table tbody tr").last();
        await lastRow.scrollIntoViewIfNeeded();
        const row = (await lastRow.boundingBox())!;
        expect(row.y + row.height).toBeLessThanOrEqual(820);
        expect((await readApp(page)).numPages).toBeGreaterThan(0);
        screenshots.push(await kvault.app().screenshot("memory-view-table"));
        expect(kvault.app().problems).toEqual([]);
    });

    it("names the model in the chat's header, says the demo model is one, and lists the shortcuts on ?", async () => {
        const { page } = kvault.app();
        await openView(page, "Chats");
        const header = page.locator(".chat-model");
        expect(await header.locator(".chat-model-name").textContent()).toBe("Kvault synthetic tiny");
        expect(await header.locator(".chat-model-badge").textContent()).toBe("demo model: random weights, noise answers");
        expect(await header.getByRole("combobox", { name: "Switch the model" }).isVisible()).toBe(true);

        await page.locator("body").press("?");
        const dialog = page.getByRole("dialog", { name: "Keyboard shortcuts" });
        await dialog.waitFor();
        const listed = await dialog.locator("tr").allTextContents();
        for (const action of ["New chat", "Previous / next chat", "Focus the message box", "Stop the answer", "Show Memory"]) {
            expect(
                listed.some((line) => line.endsWith(action)),
                action
            ).toBe(true);
        }
        screenshots.push(await kvault.app().screenshot("shortcuts-dialog"));
        await page.keyboard.press("Escape");
        await expect.poll(() => dialog.isVisible()).toBe(false);

        // "/" focuses the message box; Alt+↓ switches to the next chat; Alt+N makes a new one, its box focused.
        await page.locator("body").press("/");
        await expect.poll(() => page.evaluate(`document.activeElement?.getAttribute("aria-label")`)).toBe("Message");
        expect(await page.locator(".chat-view").getAttribute("aria-label")).toBe("Workspace Paged memory");
        await page.keyboard.press("Alt+ArrowDown");
        await expect.poll(() => page.locator(".chat-view").getAttribute("aria-label")).toBe("Workspace Notes");
        await page.keyboard.press("Alt+ArrowUp");
        await expect.poll(() => page.locator(".chat-view").getAttribute("aria-label")).toBe("Workspace Paged memory");
        await page.keyboard.press("Alt+n");
        await expect.poll(async () => (await readApp(page)).items.length).toBe(3);
        await expect.poll(() => page.evaluate(`document.activeElement?.getAttribute("aria-label")`)).toBe("Message");
        expect(kvault.app().problems).toEqual([]);
    });

    it("switches between light and dark from Settings, system by default", async () => {
        const { page } = kvault.app();
        const background = (): Promise<string> => page.evaluate(`getComputedStyle(document.body).backgroundColor`);
        expect(await page.evaluate(`document.documentElement.dataset.theme`)).toBe("system");
        await openView(page, "Settings");
        await page.getByRole("radio", { name: "Dark" }).check();
        await expect.poll(background).toBe("rgb(23, 24, 27)");
        screenshots.push(await kvault.app().screenshot("view-settings-dark"));
        await page.getByRole("radio", { name: "Light" }).check();
        await expect.poll(background).toBe("rgb(255, 255, 255)");
        await page.getByRole("radio", { name: "System" }).check();
        expect(await page.evaluate(`localStorage.getItem("kvault.theme")`)).toBe("system");
        expect(kvault.app().problems).toEqual([]);
    });
});
