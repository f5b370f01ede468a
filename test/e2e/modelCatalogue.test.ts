// The model catalogue and Hugging Face search in a real browser against the headless server, whose
// Hugging Face is a loopback server answering with recorded HF-shaped answers (real HTTP).
import os from "node:os";
import type { Locator } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fitVerdict, kvBytesPerToken, type MachineMemory } from "../../contract/modelCatalogue.js";
import { HUGGING_FACE_URL_VARIABLE } from "../../host/models/catalogue/HuggingFaceClient.js";
import { catalogueEntries } from "../../host/models/catalogue/catalogueEntries.js";
import { openModelPanel } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";
import { startHuggingFaceServer, type HuggingFaceServer } from "../support/huggingFaceServer.js";

const attribute = async (locator: Locator, name: string): Promise<string> => (await locator.getAttribute(name)) ?? "";

describe("the model catalogue, in a real browser", () => {
    let huggingFace: HuggingFaceServer | undefined;

    // Registered before the app's hooks: the stand-in listens before the server is pointed at it, and stops after the server.
    beforeAll(async () => {
        huggingFace = await startHuggingFaceServer();
    });
    afterAll(async () => {
        await huggingFace?.close();
    });

    const kvault = useKvaultApp({
        env: () => ({ [HUGGING_FACE_URL_VARIABLE]: huggingFace!.url }),
        viewport: { width: 1280, height: 1000 },
        prepare: (app) => openModelPanel(app.page)
    });
    const { screenshots } = kvault;

    it("lists the catalogue's models with a verdict per file, the arithmetic over this machine's reported free memory", async () => {
        const { page } = kvault.app();
        const catalogue = page.locator('.model-catalogue[data-state="ready"]');
        await catalogue.waitFor({ state: "attached", timeout: 30_000 });
        const machineLine = catalogue.locator(".catalogue-machine");
        const freeRam = Number(await attribute(machineLine, "data-free-ram-bytes"));
        // The host's os.freemem, read on this same machine a moment apart.
        expect(freeRam).toBeGreaterThan(os.freemem() * 0.5);
        expect(freeRam).toBeLessThan(os.totalmem());
        const freeVram = await attribute(machineLine, "data-free-vram-bytes");
        expect(freeVram, "the e2e engine runs on the CPU").toBe("");
        const machine: MachineMemory = { freeRamBytes: freeRam, totalRamBytes: os.totalmem() };
        const contextSize = Number(await attribute(catalogue.locator(".catalogue-models"), "data-context-size"));
        expect(contextSize).toBe(512); // the e2e engine's window

        const models = catalogue.locator(".catalogue-model");
        expect(await models.evaluateAll((items) => items.map((item) => item.getAttribute("data-model-id")))).toEqual(
            catalogueEntries.map((entry) => entry.id)
        );
        let numFiles = 0;
        for (const entry of catalogueEntries) {
            for (const file of entry.files) {
                const row = catalogue.locator(
                    `.catalogue-model[data-model-id="${entry.id}"] .catalogue-file[data-file-name="${file.fileName}"]`
                );
                const expected = fitVerdict({
                    weightsBytes: file.sizeBytes,
                    kvBytesPerToken: kvBytesPerToken(entry.architecture),
                    contextSize,
                    basis: "catalogue",
                    machine
                });
                expect(await attribute(row, "data-fit"), file.fileName).toBe(expected.kind);
                expect(Number(await attribute(row, "data-need-bytes")), file.fileName).toBe(expected.needBytes);
                expect(await attribute(row, "data-basis")).toBe("catalogue");
                numFiles++;
            }
        }
        expect(numFiles).toBe(33);

        await catalogue.locator('.catalogue-model[data-model-id="llama-3.2-1b"] summary').click();
        await catalogue.locator('.catalogue-model[data-model-id="qwen3-8b"] summary').click();
        const q4 = catalogue.locator('.catalogue-file[data-file-name="Llama-3.2-1B-Instruct-Q4_K_M.gguf"] .catalogue-fit');
        expect(await q4.textContent()).toMatch(/^fits in RAM: needs 0\.8 GB with 512 tokens of KV, [\d.]+ GB free$/);
    });

    it("searches Hugging Face (the loopback recording), shows the hits and a too-big file with what it needs", async () => {
        const { page } = kvault.app();
        await page.getByLabel("Search Hugging Face for GGUF models").fill("qwen3");
        await page.getByRole("button", { name: "Search Hugging Face" }).click();
        const hits = page.locator(".catalogue-hit");
        await expect
            .poll(() => hits.evaluateAll((items) => items.map((item) => item.getAttribute("data-repo"))))
            .toEqual(["unsloth/Qwen3-0.6B-GGUF", "Qwen/Qwen3-8B-GGUF", "bartowski/Qwen_Qwen3-235B-A22B-GGUF"]);
        expect(huggingFace!.requests).toContain("/api/models?search=qwen3&filter=gguf&sort=downloads&limit=30");

        await page.getByRole("button", { name: "Show the files of bartowski/Qwen_Qwen3-235B-A22B-GGUF" }).click();
        const file = page.locator('.catalogue-files[data-repo] .catalogue-file[data-file-name="Qwen_Qwen3-235B-A22B-Q4_K_M.gguf"]');
        await file.waitFor({ timeout: 30_000 });
        expect(await attribute(file, "data-fit")).toBe("tooBig");
        expect(await file.locator(".catalogue-fit").textContent()).toMatch(
            /^too big: needs 142\.7 GB \(the file alone: KV unknown until its header is read\), this machine has [\d.]+ GB free$/
        );
        await file.scrollIntoViewIfNeeded();
        screenshots.push(await kvault.app().screenshot("model-catalogue"));
    });

    it("says offline when Hugging Face cannot be reached, and keeps the catalogue", async () => {
        const { page } = kvault.app();
        await huggingFace!.close();
        await page.getByLabel("Search Hugging Face for GGUF models").fill("gemma");
        await page.getByRole("button", { name: "Search Hugging Face" }).click();
        const offline = page.locator(".catalogue-offline");
        await offline.waitFor({ timeout: 30_000 });
        expect(await offline.textContent()).toMatch(/^offline: the catalogue only \(127\.0\.0\.1:\d+ could not be reached: .+\)\.$/);
        expect(await page.locator(".catalogue-model").count()).toBe(catalogueEntries.length);
    });
});
