import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PresetExport, PresetList } from "../../contract/presets.js";
import { readApp, storedWorkspaces } from "./support/appDriver.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// Saved presets against the headless server: each change is checked where the server keeps it
// (listPresets, loadWorkspaces), and files go in and out through the page's own download and
// file input, as a user's would.
describe("saved presets in a real browser", () => {
    const { app } = useKvaultApp({ viewport: { width: 1280, height: 1000 } });
    const poll = { timeout: 30_000, interval: 200 };
    const presets = async (): Promise<PresetList["presets"]> => (await rpcFromPage<PresetList>(app().page, "listPresets")).presets;
    const settingsOf = async (index: number) => (await storedWorkspaces(app().page))[index]!.settings;
    const choose = (name: string) => app().page.getByLabel("Saved preset").selectOption({ label: name });
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-presets-"));

    it("applies a shipped preset to the workspace: its system prompt and every sampler knob, kept by the server", async () => {
        const { page } = app();
        await page.locator(".workspace-settings summary").click();
        await expect.poll(async () => (await presets()).map((preset) => preset.name), poll).toContain("Code helper");
        const coder = (await presets()).find((preset) => preset.name === "Code helper")!;
        await choose("Code helper");
        await page.getByRole("button", { name: "Apply the chosen preset to this workspace" }).click();
        await expect.poll(() => settingsOf(0), poll).toEqual(coder.settings);
        expect(await page.getByLabel("System prompt").inputValue()).toBe(coder.settings.systemPrompt);
    });

    it("saves the workspace's settings as a new preset, edits it, duplicates and deletes one", async () => {
        const { page } = app();
        await page.getByLabel("System prompt").fill("Answer in French.");
        await page.getByLabel("Temperature", { exact: true }).fill("0.9");
        await expect.poll(async () => (await settingsOf(0)).temperature, poll).toBe(0.9);
        await page.getByLabel("Preset name").fill("French");
        await page.getByRole("button", { name: "Save this workspace's settings as a new preset" }).click();
        await expect
            .poll(async () => (await presets()).find((preset) => preset.name === "French")?.settings, poll)
            .toEqual(await settingsOf(0));

        await page.getByLabel("Max tokens", { exact: true }).fill("77");
        await page.getByLabel("Preset name").fill("French, short");
        await page.getByRole("button", { name: "Save this workspace's settings over the chosen preset" }).click();
        await expect
            .poll(
                async () =>
                    (await presets())
                        .filter((preset) => preset.name.startsWith("French"))
                        .map((preset) => [preset.name, preset.settings.maxTokens]),
                poll
            )
            .toEqual([["French, short", 77]]);

        await page.getByRole("button", { name: "Duplicate the chosen preset" }).click();
        await expect.poll(async () => (await presets()).map((preset) => preset.name), poll).toContain("French, short (copy)");
        const count = (await presets()).length;
        await page.getByRole("button", { name: "Delete the chosen preset" }).click();
        await expect.poll(async () => (await presets()).length, poll).toBe(count - 1);
        expect((await presets()).map((preset) => preset.name)).not.toContain("French, short (copy)");
    });

    it("exports a preset as JSON, imports it back after deleting it, and imports an LM Studio preset naming the fields it did not map", async () => {
        const { page } = app();
        await choose("French, short");
        const [download] = await Promise.all([
            page.waitForEvent("download"),
            page.getByRole("button", { name: "Export the chosen preset to a JSON file" }).click()
        ]);
        const exportedFile = path.join(directory, "french.json");
        fs.copyFileSync((await download.path())!, exportedFile);
        const exported = JSON.parse(fs.readFileSync(exportedFile, "utf8")) as PresetExport;
        const french = (await presets()).find((preset) => preset.name === "French, short")!;
        expect(exported).toEqual({ format: "kvault-presets", version: 1, presets: [{ name: french.name, settings: french.settings }] });

        await page.getByRole("button", { name: "Delete the chosen preset" }).click();
        await expect.poll(async () => (await presets()).some((preset) => preset.name === "French, short"), poll).toBe(false);
        await page.setInputFiles('input[aria-label="Preset file to import"]', exportedFile);
        await expect
            .poll(async () => (await presets()).find((preset) => preset.name === "French, short")?.settings, poll)
            .toEqual(french.settings);

        const lmStudioFile = path.join(directory, "Terse.preset.json");
        fs.writeFileSync(
            lmStudioFile,
            JSON.stringify({
                name: "Terse",
                operation: {
                    fields: [
                        { key: "llm.prediction.systemPrompt", value: "Be terse." },
                        { key: "llm.prediction.temperature", value: 0.1 },
                        { key: "llm.prediction.topKSampling", value: 10 },
                        { key: "llm.prediction.topPSampling", value: { checked: true, value: 0.8 } },
                        { key: "llm.prediction.minPSampling", value: { checked: true, value: 0.07 } },
                        { key: "llm.prediction.repeatPenalty", value: { checked: true, value: 1.2 } },
                        { key: "llm.prediction.maxPredictedTokens", value: { checked: true, value: 64 } },
                        { key: "llm.prediction.llama.cpuThreads", value: 4 }
                    ]
                },
                load: { fields: [{ key: "llm.load.contextLength", value: 4096 }] }
            })
        );
        await page.setInputFiles('input[aria-label="Preset file to import"]', lmStudioFile);
        await expect
            .poll(async () => (await presets()).find((preset) => preset.name === "Terse")?.settings, poll)
            .toEqual({
                systemPrompt: "Be terse.",
                temperature: 0.1,
                maxTokens: 64,
                topK: 10,
                topP: 0.8,
                minP: 0.07,
                repeatPenalty: 1.2
            });
        await expect
            .poll(() => page.locator(".saved-presets [role=status]").textContent(), poll)
            .toContain("Not mapped (no such Kvault setting): llm.prediction.llama.cpuThreads, llm.load.contextLength.");

        await page.setInputFiles('input[aria-label="Preset file to import"]', {
            name: "bad.json",
            mimeType: "application/json",
            buffer: Buffer.from("[1]")
        });
        await expect
            .poll(() => page.locator(".saved-presets [role=alert]").textContent(), poll)
            .toContain("bad.json cannot be imported: it is not a JSON object");
    });

    it("makes a new workspace from the chosen preset", async () => {
        const { page } = app();
        await choose("Terse");
        const before = (await readApp(page)).items.length;
        await page.getByRole("button", { name: "Start a workspace with this preset" }).click();
        await expect.poll(async () => (await storedWorkspaces(page)).length, poll).toBe(before + 1);
        await expect.poll(async () => (await settingsOf(before)).systemPrompt, poll).toBe("Be terse.");
        expect(await settingsOf(before)).toMatchObject({ temperature: 0.1, maxTokens: 64, topK: 10 });
        fs.rmSync(directory, { recursive: true, force: true });
    });
});
