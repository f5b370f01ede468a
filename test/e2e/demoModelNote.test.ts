// A first-time user meets the built-in demo model: its random weights write noise, so the chat says
// so and offers the catalogue's smallest file that fits in one click. The headless server's Hugging
// Face is a loopback server whose resolve URLs redirect to a loopback file server (real HTTP).
import { describe, expect, it } from "vitest";
import type { EngineInfo } from "../../contract/engineProtocol.js";
import { catalogueEntries } from "../../host/models/catalogue/catalogueEntries.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { SMALLEST_CATALOGUE_FILE as SMALLEST_FILE, useCatalogueStandIn } from "./support/useCatalogueStandIn.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

describe("the demo model's note, in a real browser", () => {
    const catalogue = useCatalogueStandIn();
    const kvault = useKvaultApp({ viewport: { width: 1280, height: 1000 }, env: catalogue.env });
    const screenshots = kvault.screenshots;

    it("says above the empty chat that the demo model's answers are noise, and offers the catalogue's smallest file", async () => {
        const { page } = kvault.app();
        const info = await rpcFromPage<EngineInfo>(page, "info");
        expect(info.modelName).toBe("Kvault synthetic tiny");
        const note = page.getByRole("note", { name: "About the demo model" });
        await note.waitFor({ timeout: 30_000 });
        expect(await note.textContent()).toContain(
            "This is Kvault's built-in demo model. Its weights are random, so its answers are noise"
        );
        expect(await page.locator(".chat-empty").isVisible()).toBe(true);
        const smallest = catalogueEntries
            .flatMap((entry) => entry.files)
            .reduce((best, file) => (file.sizeBytes < best.sizeBytes ? file : best));
        expect(smallest.fileName).toBe(SMALLEST_FILE);
        const offer = note.getByRole("button", {
            name: /^Download and load Qwen 3 0\.6B Q4_K_M \(0\.4 GB\), the smallest catalogue model/
        });
        await offer.waitFor({ timeout: 30_000 });
        expect(await offer.getAttribute("data-file-name")).toBe(SMALLEST_FILE);
        screenshots.push(await kvault.app().screenshot("demo-model-note"));
    });

    it("downloads that file through the catalogue's path in one click, loads it, and the note is gone for the real model", async () => {
        const { page } = kvault.app();
        const note = page.getByRole("note", { name: "About the demo model" });
        await note.getByRole("button", { name: /^Download and load Qwen 3 0\.6B Q4_K_M/ }).click();
        await expect
            .poll(() => catalogue.huggingFace().requests, { timeout: 30_000 })
            .toContain(`/unsloth/Qwen3-0.6B-GGUF/resolve/main/${SMALLEST_FILE}`);
        // Loaded once done: the engine runs the downloaded file (the file server's bytes, "Kvault synthetic small"), and the note is gone.
        await expect
            .poll(async () => (await rpcFromPage<EngineInfo>(page, "info")).modelName, { timeout: 120_000, interval: 500 })
            .toBe("Kvault synthetic small");
        const info = await rpcFromPage<EngineInfo>(page, "info");
        expect(info.modelPath.endsWith(SMALLEST_FILE)).toBe(true);
        await expect.poll(() => note.count(), { timeout: 30_000 }).toBe(0);
        screenshots.push(await kvault.app().screenshot("demo-model-note-gone"));
    });
});
