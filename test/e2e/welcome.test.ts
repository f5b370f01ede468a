// A first run from an empty data directory: only the built-in demo model, so the empty chat welcomes
// the user with the catalogue's models that fit this machine; one click downloads one (from a loopback
// Hugging Face stand-in, as demoModelNote.test.ts), loads it and opens a chat on it, without any document.
import { describe, expect, it } from "vitest";
import type { EngineInfo } from "../../contract/engineProtocol.js";
import { configureWorkspace, readApp, sendMessage, storedWorkspaces } from "./support/appDriver.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { SMALLEST_CATALOGUE_FILE as SMALLEST_FILE, useCatalogueStandIn } from "./support/useCatalogueStandIn.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

describe("the first run's welcome, in a real browser", () => {
    const catalogue = useCatalogueStandIn();
    const kvault = useKvaultApp({ viewport: { width: 1280, height: 900 }, env: catalogue.env }); // an empty data directory
    const screenshots = kvault.screenshots;

    it("offers the catalogue's models that fit this machine, smallest first, in the empty chat", async () => {
        const { page } = kvault.app();
        expect((await rpcFromPage<EngineInfo>(page, "info")).modelName).toBe("Kvault synthetic tiny");
        const welcome = page.getByRole("region", { name: "Welcome to Kvault" });
        await welcome.locator(".welcome-choice").first().waitFor({ timeout: 30_000 });
        const offered = await welcome
            .locator(".welcome-choice")
            .evaluateAll((items) => items.map((item) => item.getAttribute("data-file-name")));
        expect(offered[0]).toBe(SMALLEST_FILE);
        expect(offered.length).toBeGreaterThan(0);
        expect(offered.length).toBeLessThanOrEqual(4);
        // The demo model is said to be one where it answers: the chat's header, beside the note.
        expect(await page.locator(".chat-model-badge").textContent()).toBe("demo model: random weights, noise answers");
        screenshots.push(await kvault.app().screenshot("welcome-1280"));
        await page.setViewportSize({ width: 720, height: 800 });
        expect(await page.evaluate<number>("document.scrollingElement.scrollWidth - innerWidth")).toBe(0);
        screenshots.push(await kvault.app().screenshot("welcome-720"));
        await page.setViewportSize({ width: 1280, height: 900 });
    });

    it("downloads the chosen model with its progress, loads it and opens a chat on it, whose answer comes from that model", async () => {
        const { page } = kvault.app();
        const welcome = page.getByRole("region", { name: "Welcome to Kvault" });
        const before = (await readApp(page)).items.length;
        await welcome.getByRole("button", { name: /^Download Qwen 3 0\.6B Q4_K_M \(0\.4 GB\) and chat with it$/ }).click();
        await expect
            .poll(() => catalogue.huggingFace().requests, { timeout: 30_000 })
            .toContain(`/unsloth/Qwen3-0.6B-GGUF/resolve/main/${SMALLEST_FILE}`);
        await expect
            .poll(async () => (await rpcFromPage<EngineInfo>(page, "info")).modelName, { timeout: 120_000, interval: 500 })
            .toBe("Kvault synthetic small");
        // A new chat on it, selected, its message box focused; the welcome and the demo label gone.
        await expect.poll(async () => (await readApp(page)).items.length, { timeout: 30_000 }).toBe(before + 1);
        await expect
            .poll(() => page.locator(".chat-view").getAttribute("aria-label"), { timeout: 30_000 })
            .toBe("Workspace Chat with Qwen 3 0.6B");
        await expect.poll(() => page.evaluate(`document.activeElement?.getAttribute("aria-label")`), { timeout: 10_000 }).toBe("Message");
        expect(await page.locator(".chat-model-name").textContent()).toBe("Kvault synthetic small");
        expect(await page.locator(".chat-model-badge").count()).toBe(0);
        expect(await welcome.count()).toBe(0);

        await configureWorkspace(page, { temperature: 0, maxTokens: 4 }); // a short answer: the small model is slow on a busy CPU
        await sendMessage(page, "Hello");
        await expect
            .poll(
                async () => (await storedWorkspaces(page)).find((workspace) => workspace.name === "Chat with Qwen 3 0.6B")?.messages.length,
                {
                    timeout: 120_000,
                    interval: 500
                }
            )
            .toBe(2);
        screenshots.push(await kvault.app().screenshot("welcome-chat"));
        expect(kvault.app().problems).toEqual([]);
    });
});
