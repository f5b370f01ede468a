import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import {
    configureWorkspace,
    newWorkspace,
    openSettingsPanel,
    openView,
    readApp,
    selectWorkspace,
    sendMessage,
    showChats,
    storedWorkspaces
} from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// A --models-folder of two generated models with different vocabularies (512 and 32,000 tokens),
// so that a draft counts differently on each: found as "tiny-local" and "small-local".
const folder = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-models-"));
fs.symlinkSync(ensureGeneratedModel("tiny"), path.join(folder, "tiny-local.gguf"));
fs.symlinkSync(ensureGeneratedModel("small"), path.join(folder, "small-local.gguf"));
afterAll(() => fs.rmSync(folder, { recursive: true, force: true }));

const DRAFT = "Pages of the cache, counted by each model's own tokenizer.";
/** Loading the 125M-parameter model on a loaded machine takes a while. */
const LOAD_TIMEOUT_MS = 180_000;

/** Chooses the selected workspace's local model in its settings. */
async function chooseModel(page: Page, model: string): Promise<void> {
    await showChats(page);
    const details = page.locator(".workspace-settings");
    if ((await details.getAttribute("open")) === null) {
        await details.locator("summary").click();
    }
    const select = page.getByLabel("Local model", { exact: true });
    await expect.poll(() => select.locator(`option[value="${model}"]`).count(), { timeout: 30_000 }).toBe(1);
    await select.selectOption(model);
    await details.locator("summary").click();
}

/** The meter's count of DRAFT in the selected workspace, once it has measured it. */
async function draftTokens(page: Page): Promise<number> {
    await page.getByLabel("Message", { exact: true }).fill(DRAFT);
    const meter = page.getByLabel("Context meter");
    await expect.poll(() => meter.getAttribute("data-fresh"), { timeout: LOAD_TIMEOUT_MS }).toBe("true");
    return Number(await meter.getAttribute("data-draft"));
}

describe("workspaces on two different local models in a real browser", () => {
    const { app, server, screenshots } = useKvaultApp({ serveArgs: ["--models-folder", folder] });

    it("each workspace's meter counts with the model it chose, and both answer", async () => {
        const { page } = app();
        const first = (await readApp(page)).items[0]!;
        await configureWorkspace(page, { temperature: 0, maxTokens: 4 });
        await chooseModel(page, "small-local");
        const onSmall = await draftTokens(page);

        const second = await newWorkspace(page);
        await configureWorkspace(page, { temperature: 0, maxTokens: 4 });
        await chooseModel(page, "tiny-local");
        const onTiny = await draftTokens(page);

        // before: no workspace could choose a model, and every meter counted with the server's model
        expect(onSmall).not.toBe(onTiny);
        const stored = await storedWorkspaces(page);
        expect(stored.find((workspace) => workspace.id === first.id)?.localModel).toBe("small-local");
        expect(stored.find((workspace) => workspace.id === second.id)?.localModel).toBe("tiny-local");
        screenshots.push(await app().screenshot("local-model-chosen"));

        await sendMessage(page, DRAFT);
        await selectWorkspace(page, first.name);
        expect(await draftTokens(page)).toBe(onSmall);
        await sendMessage(page, DRAFT);
        for (const id of [first.id, second.id]) {
            await expect
                .poll(async () => (await storedWorkspaces(page)).find((workspace) => workspace.id === id)?.messages.length, {
                    timeout: LOAD_TIMEOUT_MS
                })
                .toBe(2);
        }
        const ps = (await (await fetch(`${server().url}/api/ps`, { headers: { authorization: `Bearer ${server().apiKey}` } })).json()) as {
            models: { name: string }[];
        };
        expect(ps.models.map((model) => model.name)).toEqual(expect.arrayContaining(["small-local", "tiny-local"]));
    });

    it("the Memory view shows each loaded model's page map, and the settings keep the local models' idle time", async () => {
        const { page } = app();
        const onSmall = (await readApp(page)).items[0]!;
        await openView(page, "Memory");
        const picker = page.getByLabel("Loaded model whose page map is shown", { exact: true });
        // the server's own model, then the two the workspaces loaded (before: no picker, the server's model only)
        await expect.poll(() => picker.locator("option").count(), { timeout: 30_000 }).toBe(3);
        const slotsOf = (workspace: string) => page.locator(`#view-memory [data-sequence][data-workspace="${workspace}"]`);
        expect(await slotsOf(onSmall.id).count()).toBe(0); // it never ran on the server's model
        await picker.selectOption("small-local");
        await expect.poll(() => slotsOf(onSmall.id).count(), { timeout: 30_000 }).toBeGreaterThan(0);
        screenshots.push(await app().screenshot("page-map-of-a-local-model"));

        await openSettingsPanel(page);
        const section = page.locator('[aria-labelledby="model-pool-heading"]');
        // --models-folder was given for this run: the folders are the command line's, not editable here
        expect(await page.locator("#models-folders").isDisabled()).toBe(true);
        await page.locator("#model-idle-seconds").fill("120");
        await page.getByRole("button", { name: "Save the local models' settings" }).click();
        await expect.poll(() => section.getAttribute("data-model-idle-seconds"), { timeout: 30_000 }).toBe("120");
        const settings = JSON.parse(fs.readFileSync(path.join(server().dataDir, "settings.json"), "utf8")) as {
            modelPool: { modelIdleSeconds: number; modelsFolders: string[] };
        };
        // kept for the next start; the folders stay the file's, the command line's are this run's only
        expect(settings.modelPool).toMatchObject({ modelIdleSeconds: 120, modelsFolders: [] });
    });
});
