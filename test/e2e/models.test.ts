import path from "node:path";
import { describe, expect, it } from "vitest";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { configureWorkspace, openModelPanel, sendMessage, storedWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";
import { repositoryRoot } from "./support/startKvaultServer.js";

describe("the model manager in a real browser: a bad file gives a clear error, a GGUF shows its facts", () => {
    const { app, server, screenshots } = useKvaultApp({
        viewport: { width: 1280, height: 1300 },
        prepare: ({ page }) => openModelPanel(page),
        // K and V in Q8_0: the facts' KV per token follow the engine's type
        serveArgs: ["--kv-type", "q8_0"]
    });

    it("inspecting a file that is not GGUF shows model_not_gguf in an alert, and the chat still works", async () => {
        const { page } = app();
        const notGguf = path.join(repositoryRoot, "package.json");
        const manager = page.locator(".model-manager");
        await page.getByLabel("GGUF path on the machine running Kvault").fill(notGguf);
        await page.getByRole("button", { name: "Inspect the model file" }).click();
        // the inspection child starts in seconds, more on a loaded machine
        await expect.poll(() => manager.getAttribute("data-inspect-state"), { timeout: 60_000 }).toBe("error");

        const alert = manager.getByRole("alert");
        expect(await alert.getAttribute("data-error-code")).toBe("model_not_gguf");
        const text = (await alert.textContent())!;
        expect(text).toContain("Cannot use this file (model_not_gguf).");
        expect(text).toContain(
            `${notGguf} is not a GGUF file (it starts with "{\\n  "; a GGUF file starts with "GGUF"). Open a .gguf model file.`
        );
        await manager.scrollIntoViewIfNeeded();
        screenshots.push(await app().screenshot("model-bad-file"));

        // The engine was not touched: the same model answers the next message.
        expect(await page.locator('[data-fact="model-name"]').textContent()).toBe("Kvault synthetic tiny");
        await configureWorkspace(page, { temperature: 0, maxTokens: 6 });
        await sendMessage(page, "Still there?");
        await expect
            .poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), {
                timeout: 120_000,
                interval: 250
            })
            .toEqual(["user", "assistant"]);
        expect((await storedWorkspaces(page))[0]!.messages[1]!.content.length).toBeGreaterThan(0);
        expect(app().problems).toEqual([]);
    });

    it("inspecting the demo model's GGUF shows its facts and a memory estimate", async () => {
        const { page } = app();
        await openModelPanel(page); // the last test chatted, in the Chats view
        const tiny = ensureGeneratedModel("tiny");
        const manager = page.locator(".model-manager");
        await page.getByLabel("GGUF path on the machine running Kvault").fill(tiny);
        await page.getByRole("button", { name: "Inspect the model file" }).click();
        await expect.poll(() => manager.getAttribute("data-inspect-state"), { timeout: 60_000 }).toBe("done");
        expect(await manager.getByRole("alert").count()).toBe(0);
        const facts = manager.locator(".model-facts");
        expect(await facts.getAttribute("data-model-path")).toBe(tiny);
        expect(await facts.locator('[data-fact="architecture"]').textContent()).toBe("llama");
        expect(await facts.locator('[data-fact="file-type"]').textContent()).toBe("MOSTLY_F16");
        // the tiny model: 2 layers, 4 Q heads and 2 KV heads of 32 values; a token's K and V are 2 × 2 × 64 values
        expect(await facts.locator('[data-fact="heads"]').textContent()).toBe("4 Q, 2 KV (grouped-query: 2 Q heads share each KV head)");
        expect(await facts.locator('[data-fact="head-sizes"]').textContent()).toBe("K 32, V 32 values");
        expect(await facts.locator('[data-fact="sliding-window"]').textContent()).toBe("none");
        expect(await facts.locator('[data-fact="kv-per-token"]').textContent()).toBe(
            "272 bytes in Q8_0, K and V of all layers (F16 512 bytes · Q8_0 272 bytes · Q4_0 144 bytes)"
        );
        expect(await page.locator('[data-fact="kv-type"]').textContent()).toBe(
            "Q8_0, 272 bytes per token (measured from llama.cpp's own state)"
        );
        expect(await facts.locator('[data-fact="memory-kind"]').textContent()).toBe("plain: pages can hold it (split mode)");
        expect(await facts.locator('[data-fact="estimate"]').textContent()).toMatch(
            /^For 512 tokens × 2 sequences \(KV cache [\d.,]+ \w+ in F16\): on the CPU about [\d.,]+ \w+ of RAM; fully on a GPU about .* This machine has [\d.,]+ \w+ of RAM: it fits on the CPU alone\.$/
        );
        await manager.scrollIntoViewIfNeeded();
        screenshots.push(await app().screenshot("model-facts"));
        expect(app().problems).toEqual([]);
    });

    it('"Use the built-in demo model" starts a new engine on it, and the chat works on the new engine', async () => {
        const { page } = app();
        await openModelPanel(page); // the last test chatted, in the Chats view
        const manager = page.locator(".model-manager");
        const pidBefore = server().enginePid();
        await page.getByRole("button", { name: "Use the built-in demo model" }).click();
        expect(pidBefore).toBeDefined();
        await expect.poll(() => manager.getAttribute("data-load-state"), { timeout: 5_000, interval: 50 }).not.toBe("error");
        await expect
            .poll(
                () => {
                    const pid = server().enginePid();
                    return pid !== undefined && pid !== pidBefore;
                },
                { timeout: 60_000, interval: 250 }
            )
            .toBe(true);
        await expect.poll(() => manager.getAttribute("data-load-state"), { timeout: 60_000 }).toBe("idle");
        expect(await manager.getByRole("alert").count()).toBe(0);
        expect(await page.locator('[data-fact="model-name"]').textContent()).toBe("Kvault synthetic tiny");
        expect(server().stderr()).toMatch(/Engine: switched to Kvault synthetic tiny; 0 request\(s\) ended with model_switched\./);

        await sendMessage(page, "And now?");
        await expect
            .poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), {
                timeout: 120_000,
                interval: 250
            })
            .toEqual(["user", "assistant", "user", "assistant"]);
        expect(app().problems).toEqual([]);
    });
});
