import { describe, expect, it } from "vitest";
import { configureWorkspace, openView, readApp, storedWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

const number = (text: string): number => Number(text.replaceAll(",", ""));

describe("the context meter in a real browser (512-token window)", () => {
    const { app, screenshots } = useKvaultApp();

    it("blocks a draft that does not fit and says how many tokens it needs and how many are left of the window", async () => {
        const { page } = app();
        const box = page.getByLabel("Message", { exact: true });
        const send = page.getByRole("button", { name: "Send message" });
        await box.fill("pages ".repeat(700));

        const reason = page.locator(".composer-reason");
        await expect
            .poll(() => reason.textContent(), { timeout: 30_000 })
            .toMatch(/^This message needs [\d,]+ tokens; [\d,]+ are left of 512\. Shorten it or start a new workspace\.$/);
        const [, needed, left] = /needs ([\d,]+) tokens; ([\d,]+) are left/.exec((await reason.textContent())!)!;
        expect(number(needed!)).toBeGreaterThan(number(left!));
        const meter = page.getByLabel("Context meter");
        expect(await meter.getAttribute("data-draft")).toBe(String(number(needed!)));
        expect(await meter.getAttribute("data-left")).toBe(String(number(left!)));
        expect(await meter.getAttribute("data-limit")).toBe("512");
        expect(await send.isDisabled()).toBe(true);
        screenshots.push(await app().screenshot("meter-blocks-oversized-draft"));

        await box.press("Enter");
        await page.waitForTimeout(300);
        expect((await readApp(page)).items[0]!.numMessages).toBe(0);
        expect((await storedWorkspaces(page))[0]!.messages).toEqual([]);
    });

    it("blocks a draft that leaves less room than Max tokens, and sends once Max tokens fits", async () => {
        const { page } = app();
        await configureWorkspace(page, { temperature: 0, maxTokens: 500 });
        const box = page.getByLabel("Message", { exact: true });
        await box.fill("hello");
        const reason = page.locator(".composer-reason");
        await expect
            .poll(() => reason.textContent(), { timeout: 30_000 })
            .toMatch(
                /^The answer may take up to 500 tokens \(Max tokens\), but only [\d,]+ are left after this message \(window 512\)\. Lower Max tokens to [\d,]+ or less, or shorten the message\.$/
            );
        expect(await page.getByRole("button", { name: "Send message" }).isDisabled()).toBe(true);

        await configureWorkspace(page, { maxTokens: 12 });
        await expect.poll(() => page.getByRole("button", { name: "Send message" }).isEnabled(), { timeout: 30_000 }).toBe(true);
        expect(await reason.count()).toBe(0);

        // Shift+Enter is a new line; Enter sends.
        await box.press("Shift+Enter");
        await box.type("world");
        expect(await box.inputValue()).toBe("hello\nworld");
        const usedBefore = Number(await page.getByLabel("Context meter").getAttribute("data-used"));
        await box.press("Enter");
        await expect.poll(async () => (await readApp(page)).items[0]!.numMessages, { timeout: 120_000 }).toBe(2);
        expect(await box.inputValue()).toBe("");
        // The conversation now holds the message and the answer: the meter measures it again.
        await expect
            .poll(async () => Number(await page.getByLabel("Context meter").getAttribute("data-used")), { timeout: 30_000 })
            .toBeGreaterThan(usedBefore);
        const stored = (await storedWorkspaces(page))[0]!.messages;
        expect(stored[0]).toMatchObject({ role: "user", content: "hello\nworld" });
        expect(stored[1]).toMatchObject({ role: "assistant" });
        screenshots.push(await app().screenshot("meter-after-a-turn"));

        const copy = page.getByRole("button", { name: "Copy your message" });
        await copy.click();
        await expect.poll(() => copy.textContent()).toBe("Copied");
        expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe("hello\nworld");
        expect(app().problems).toEqual([]);
    });

    it("renames and recolours a workspace, and every control has an accessible name", async () => {
        const { page } = app();
        await page.getByRole("button", { name: "Rename Workspace 1" }).click();
        const name = page.getByLabel("Workspace name");
        await name.fill("Drafts");
        await name.press("Enter");
        await expect.poll(async () => (await readApp(page)).items[0]!.name).toBe("Drafts");

        await page.locator(".workspace-settings summary").click();
        await page.getByLabel("Colour Green").check();
        await expect.poll(async () => (await readApp(page)).items[0]!.colour).toBe("#22c55e");
        expect((await storedWorkspaces(page))[0]).toMatchObject({ name: "Drafts", colour: 2 });

        const unnamed = await page.evaluate<
            string[]
        >(`[...document.querySelectorAll("button, input, textarea, select, summary, canvas[tabindex]")]
            .filter((element) => (element.getAttribute("aria-label") ?? "").trim() === "" && (element.labels?.[0]?.textContent ?? "").trim() === ""
                && !(element.tagName === "SUMMARY" && element.textContent.trim() !== ""))
            .map((element) => element.outerHTML.slice(0, 120))`);
        expect(unnamed).toEqual([]);
    });

    it("is usable 900 pixels wide, in light and dark: nothing overflows sideways", async () => {
        const { page } = app();
        await page.setViewportSize({ width: 900, height: 700 });
        await page.waitForTimeout(300);
        expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(900);
        expect(await page.getByRole("button", { name: "Send message" }).isVisible()).toBe(true);
        await openView(page, "Memory"); // the page map is a view of its own, at the same width
        expect(await page.locator(".page-map-canvas").isVisible()).toBe(true);
        expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(900);
        await openView(page, "Chats");
        screenshots.push(await app().screenshot("layout-900px"));

        await page.emulateMedia({ colorScheme: "dark" });
        await expect.poll(() => page.evaluate<string>(`getComputedStyle(document.body).backgroundColor`)).toBe("rgb(23, 24, 27)");
        await page.waitForTimeout(300);
        screenshots.push(await app().screenshot("layout-900px-dark"));
        expect(app().problems).toEqual([]);
    });
});
