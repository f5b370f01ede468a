// An answer written by the built-in demo model (random weights) says so on the answer itself,
// wherever the chat is read later; an answer kept before answers recorded their model reads as before.
import { describe, expect, it } from "vitest";
import type { EngineInfo } from "../../contract/engineProtocol.js";
import { readApp, sendMessage } from "./support/appDriver.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

describe("the demo model's label on its answers, in a real browser", () => {
    const kvault = useKvaultApp({
        seed: [
            {
                id: "ui-notes",
                name: "Notes",
                colour: 0,
                messages: [
                    { role: "user", content: "An old question." },
                    { role: "assistant", content: "An answer kept before answers named their model." }
                ]
            }
        ],
        viewport: { width: 1280, height: 900 }
    });
    const { screenshots } = kvault;

    it("labels the demo model's new answer 'demo model', after a reload too, and leaves the old answer as it was", async () => {
        const { page } = kvault.app();
        expect((await rpcFromPage<EngineInfo>(page, "info")).modelName).toBe("Kvault synthetic tiny");
        const answers = page.locator('.message[data-role="assistant"]:not(.message-live)');
        await expect.poll(() => answers.count(), { timeout: 30_000 }).toBe(1);
        expect(await answers.first().locator(".answer-demo-label").count()).toBe(0);

        await sendMessage(page, "Say something.");
        await expect
            .poll(async () => (await readApp(page)).items.find((item) => item.id === "ui-notes")?.numMessages, {
                timeout: 120_000,
                interval: 250
            })
            .toBe(4);
        await expect.poll(() => answers.count()).toBe(2);
        const label = answers.nth(1).locator(".answer-demo-label");
        expect(await label.textContent()).toBe("demo model");
        expect(await label.getAttribute("title")).toBe("Kvault synthetic tiny: random weights, so its answers are noise");
        screenshots.push(await kvault.app().screenshot("demo-model-label"));

        // Kept with the answer in the store: a reload reads the label back from the chat's file.
        await page.reload();
        await expect.poll(() => answers.count(), { timeout: 30_000 }).toBe(2);
        expect(await answers.nth(1).locator(".answer-demo-label").textContent()).toBe("demo model");
        expect(await answers.first().locator(".answer-demo-label").count()).toBe(0);
        expect(kvault.app().problems).toEqual([]);
    });
});
