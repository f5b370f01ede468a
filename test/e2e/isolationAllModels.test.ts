import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Locator } from "playwright-core";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { openView } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// A --models-folder of two generated models, loaded through the API beside the server's own.
const folder = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-isolation-models-"));
fs.symlinkSync(ensureGeneratedModel("tiny"), path.join(folder, "tiny-local.gguf"));
fs.symlinkSync(ensureGeneratedModel("small"), path.join(folder, "small-local.gguf"));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

const LOCAL_MODELS = ["small-local", "tiny-local"];
/** Loading the 125M-parameter model on a loaded machine takes a while. */
const LOAD_TIMEOUT_MS = 180_000;
/** Three flipped-byte drills one after another, each starting sandboxed engines twice. */
const DRILLS_TIMEOUT_MS = 450_000;

/** The model each row names and the state it reached, in order. */
async function readRows(list: Locator): Promise<string[]> {
    return list
        .locator("[data-model]")
        .evaluateAll((rows) => rows.map((row) => `${row.getAttribute("data-model")}:${row.getAttribute("data-row-state")}`));
}

describe("the Isolation view runs the audit and the drills on every loaded model", () => {
    const { app, server, screenshots } = useKvaultApp({
        serveArgs: ["--models-folder", folder],
        viewport: { width: 1280, height: 1500 }
    });

    it("audits, then runs the flipped-byte drill, over all loaded models, a row per model naming it", async () => {
        const { page } = app();
        for (const model of LOCAL_MODELS) {
            const response = await fetch(`${server().url}/v1/chat/completions`, {
                method: "POST",
                headers: { authorization: `Bearer ${server().apiKey}`, "content-type": "application/json" },
                body: JSON.stringify({ model, messages: [{ role: "user", content: "Hello" }], max_tokens: 1 }),
                signal: AbortSignal.timeout(LOAD_TIMEOUT_MS)
            });
            expect(response.status, await response.clone().text()).toBe(200);
        }
        await openView(page, "Isolation");
        const picker = page.getByLabel("Loaded model the audit, canary and drills run on", { exact: true });
        // the server's own model, the two loaded, and all of them (before: no picker, the server's model only)
        await expect.poll(() => picker.locator("option").count(), { timeout: 30_000 }).toBe(4);
        const own = (await picker.locator("option").first().getAttribute("value"))!;
        await picker.selectOption({ label: "All loaded models" });
        const everyModel = [own, ...LOCAL_MODELS];

        await page.getByRole("button", { name: "Run audit now" }).click();
        const audits = page.getByRole("list", { name: "Audit of each loaded model" });
        await expect.poll(() => readRows(audits), { timeout: 60_000 }).toEqual(everyModel.map((model) => `${model}:passed`));
        for (const model of everyModel) {
            expect(await audits.locator(`[data-model="${model}"]`).textContent()).toBe(`${model} OK: I1–I7 hold`);
        }

        await page.getByRole("button", { name: "Run the flipped-byte drill" }).click();
        const drills = page.getByRole("list", { name: "The flipped-byte drill on each loaded model" });
        // a row running and the other drill's button, read in one look: on a fast machine the drills can end between two looks
        const whileRunning = (): Promise<{ numRunning: number; otherDisabled: boolean | undefined }> =>
            page.evaluate(`({
                numRunning: document.querySelectorAll('[aria-label="The flipped-byte drill on each loaded model"] [data-row-state="running"]').length,
                otherDisabled: document.querySelector('button[aria-label="Run the late-write drill"]')?.disabled
            })`);
        // one drill at a time: while a row runs, the other drill cannot start
        await expect.poll(whileRunning, { timeout: 10_000 }).toEqual({ numRunning: 1, otherDisabled: true });
        await expect
            .poll(() => readRows(drills), { timeout: DRILLS_TIMEOUT_MS, interval: 500 })
            .toEqual(everyModel.map((model) => `${model}:passed`));
        expect(await drills.locator(`[data-model="${LOCAL_MODELS[1]}"]`).textContent()).toMatch(
            /^tiny-local Guard fired: handoff_checksum_mismatch; Victim clean/
        );
        screenshots.push(await app().screenshot("isolation-on-every-loaded-model"));
        expect(app().problems).toEqual([]);
    });
});
