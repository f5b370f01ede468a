import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { applyEngineSettings, openModelPanel, openSettingsPanel, planEngineSettings } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

/** The small engine of the other browser tests, but in settings.json rather than on the command line, so the screen may change it. */
const smallEngine = { contextSize: 512, decodeSequences: 2, pageTokens: 16 };
/** The same on the CPU whatever GPU drivers the machine has: the context size's plan means RAM. */
const cpuEngine = { ...smallEngine, gpu: "off" };

describe("the settings screen in a real browser applies a context size with a clear engine restart", () => {
    // in settings.json before the first server starts; the screen changes it there, and the restarts read it back
    const kvault = useKvaultApp({
        files: () => ({ "settings.json": JSON.stringify({ version: 2, engine: cpuEngine }) }),
        engineArgs: false,
        viewport: { width: 1280, height: 1800 }
    });
    const saved = (): { engine: Record<string, unknown> } =>
        JSON.parse(fs.readFileSync(path.join(kvault.server().dataDir, "settings.json"), "utf8")) as { engine: Record<string, unknown> };

    it("plans the memory, restarts the engine on apply, shows the new window, and keeps it in settings.json", async () => {
        const server = kvault.server();
        const app = kvault.app();
        const { page } = app;
        await openModelPanel(page);
        expect(await page.locator('[data-fact="window"]').textContent()).toMatch(/^512 tokens per workspace/);
        await openSettingsPanel(app.page);
        const panel = page.locator("#view-settings .settings-panel");
        expect(await panel.getAttribute("data-settings-host")).toBe("headless");
        expect(await panel.locator("[data-state-directory]").getAttribute("data-state-directory")).toBe(server.dataDir);
        // What the engine computes on, beside the GPU offload choice and in the status bar: gpu "off" is the CPU, with Kvault's own build.
        expect(await panel.locator("[data-gpu-devices]").textContent()).toBe(" Running on cpu (local build).");
        expect(await page.locator('[data-status="backend"]').getAttribute("data-binary")).toBe("local build");
        // The server was started with --api-key and --port: the API is the server itself, and its key is never handed to the page.
        expect(await page.locator(".shell-main").textContent()).not.toContain(server.apiKey);

        const enginePid = server.enginePid();
        expect(enginePid).toBeDefined();
        await page.getByLabel("Context size (tokens)").fill("1024");
        const plan = await planEngineSettings(page);
        expect(await plan.getAttribute("data-fits")).toBe("yes");
        // The tiny model keeps a token's K and V of both layers in 512 bytes (F16): 1,024 × 2 × 512 bytes each for decode and prefill.
        expect(await plan.locator('[data-memory="decodeKv"]').textContent()).toBe(
            "KV of the decode context: 1,024 tokens × 2 sequences × 512 bytes (F16)1.00 MiBRAM"
        );
        expect(await plan.locator('[data-memory="pagePool"]').textContent()).toMatch(
            /^Host page pool: 192 pages × 16 tokens × 512 bytes \(F16\)1\.50 MiBRAM$/
        );
        expect(await plan.locator('[data-plan="ram"]').textContent()).toMatch(
            /^RAM: [\d.]+ \w+ needed of [\d.]+ \w+ available for the engine/
        );
        expect(await plan.locator('[data-plan="restart"]').textContent()).toBe(
            "The engine restarts on the same model; no turn is running."
        );
        kvault.screenshots.push(await app.screenshot("settings-context-planned"));

        await applyEngineSettings(page);
        // A new engine process, on the new window: the model panel shows it at once.
        expect(server.enginePid()).not.toBe(enginePid);
        expect(await page.locator('[data-fact="window"]').textContent()).toMatch(/^1,024 tokens per workspace/);
        expect(await page.getByLabel("Context meter").textContent()).toContain("Window 1,024 (set by the window)");
        // The meter measures again against the new engine: what is left counts from its window, not the old one's.
        await expect.poll(() => page.getByLabel("Context meter").getAttribute("data-limit"), { timeout: 30_000 }).toBe("1024");
        expect(await page.getByLabel("Context size (tokens)").inputValue()).toBe("1024");
        expect(saved().engine).toMatchObject({ ...cpuEngine, contextSize: 1024 });
        expect(server.stderr()).toMatch(/Engine: restarted with new settings; 0 request\(s\) ended with engine_settings_changed\./);
        await panel.locator("[data-engine-settings]").scrollIntoViewIfNeeded();
        kvault.screenshots.push(await app.screenshot("settings-context-applied"));
        expect(app.problems).toEqual([]);
    });

    it("a reopened server starts with the applied window; a value from the command line is shown with its flag and cannot be edited", async () => {
        await kvault.restart();
        const { page } = kvault.app();
        await openModelPanel(page);
        expect(await page.locator('[data-fact="window"]').textContent()).toMatch(/^1,024 tokens per workspace/);

        await kvault.restart({ serveArgs: ["--decode-sequences", "1"] });
        const pinnedApp = kvault.app();
        await openSettingsPanel(pinnedApp.page);
        const field = pinnedApp.page.locator('[data-setting="decodeSequences"]');
        expect(await pinnedApp.page.getByLabel("Decode sequences (workspaces generating at once)").isDisabled()).toBe(true);
        expect(await field.textContent()).toContain("Given on the command line (--decode-sequences) for this run");
        expect(await pinnedApp.page.getByLabel("Context size (tokens)").inputValue()).toBe("1024");
        // settings.json keeps its own value: the command line's is for that run only.
        expect(saved().engine).toMatchObject({ decodeSequences: 2, contextSize: 1024 });
        expect(pinnedApp.problems).toEqual([]);
    });
});

describe("the settings screen in a real browser takes a number of GPU layers", () => {
    const kvault = useKvaultApp({
        files: () => ({ "settings.json": JSON.stringify({ version: 2, engine: smallEngine }) }),
        engineArgs: false,
        viewport: { width: 1280, height: 1800 }
    });

    it("refuses more layers than the model has before any restart, and applies a count that loads on the CPU", async () => {
        const server = kvault.server();
        const app = kvault.app();
        const settingsFile = path.join(server.dataDir, "settings.json");
        const { page } = app;
        await openSettingsPanel(page);
        const panel = page.locator("#view-settings .settings-panel");
        const enginePid = server.enginePid();

        await page.getByLabel("GPU offload", { exact: true }).selectOption("layers");
        const layers = page.getByLabel("GPU layers", { exact: true });
        await layers.fill("99");
        // This machine has no GPU: the screen says where the layers stay.
        expect(await panel.locator('[data-gpu-note="cpu"]').textContent()).toBe(" No GPU: layers stay on the CPU.");
        const plan = await planEngineSettings(page);
        expect(await plan.getAttribute("data-fits")).toBe("no");
        // The tiny model has 2 layers; node-llama-cpp counts the output layer too.
        expect(await plan.locator('[data-plan="problem"]').allTextContents()).toEqual([
            'GPU layers is 99, but this model has 2 layers and an output layer (3 in all). Give 0 to 3, or "auto" for all that fit.'
        ]);
        expect(await page.getByRole("button", { name: "Apply and restart the engine" }).isDisabled()).toBe(true);
        expect(server.enginePid()).toBe(enginePid);

        await layers.fill("2");
        await planEngineSettings(page);
        expect(await plan.getAttribute("data-fits")).toBe("yes");
        expect(await plan.textContent()).toContain("No GPU: layers stay on the CPU.");
        kvault.screenshots.push(await app.screenshot("settings-gpu-layers-planned"));
        await applyEngineSettings(page);
        expect(server.enginePid()).not.toBe(enginePid);
        expect(await layers.inputValue()).toBe("2");
        expect((JSON.parse(fs.readFileSync(settingsFile, "utf8")) as { engine: Record<string, unknown> }).engine).toMatchObject({
            ...smallEngine,
            gpu: "auto",
            gpuLayers: 2
        });
        expect(app.problems).toEqual([]);
    });
});
