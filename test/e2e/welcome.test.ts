// A first run from an empty data directory: only the built-in demo model, so the empty chat welcomes
// the user with the catalogue's models that fit this machine; one click downloads one (from a loopback
// Hugging Face stand-in, as demoModelNote.test.ts), loads it and opens a chat on it, without any document.
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineInfo } from "../../contract/engineProtocol.js";
import { HUGGING_FACE_URL_VARIABLE } from "../../host/models/catalogue/HuggingFaceClient.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { startHuggingFaceServer, type HuggingFaceServer } from "../support/huggingFaceServer.js";
import { startModelFileServer, type ModelFileServer } from "../support/modelFileServer.js";
import { configureWorkspace, readApp, sendMessage, storedWorkspaces } from "./support/appDriver.js";
import { openKvault, type KvaultPage } from "./support/openKvault.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { startKvaultServer, type KvaultServer } from "./support/startKvaultServer.js";

const SMALLEST_FILE = "Qwen3-0.6B-Q4_K_M.gguf";

describe("the first run's welcome, in a real browser", () => {
    const screenshots: string[] = [];
    let files: ModelFileServer | undefined;
    let huggingFace: HuggingFaceServer | undefined;
    let server: KvaultServer | undefined;
    let app: KvaultPage | undefined;

    beforeAll(async () => {
        files = await startModelFileServer();
        // The smallest catalogue file's name, with a generated model's bytes behind it: "Kvault synthetic small", not the demo.
        files.serve(SMALLEST_FILE, { body: fs.readFileSync(ensureGeneratedModel("small")), ranges: true });
        huggingFace = await startHuggingFaceServer({ filesUrl: files.url });
        server = await startKvaultServer({ env: { [HUGGING_FACE_URL_VARIABLE]: huggingFace.url } }); // an empty data directory
        app = await openKvault(await server.loginUrl(), { width: 1280, height: 900 });
    });

    afterAll(async () => {
        await app?.close();
        await server?.stop();
        await huggingFace?.close();
        await files?.close();
        console.log(`screenshots:\n${screenshots.join("\n")}`);
    });

    it("offers the catalogue's models that fit this machine, smallest first, in the empty chat", async () => {
        const { page } = app!;
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
        screenshots.push(await app!.screenshot("welcome-1280"));
        await page.setViewportSize({ width: 720, height: 800 });
        expect(await page.evaluate<number>("document.scrollingElement.scrollWidth - innerWidth")).toBe(0);
        screenshots.push(await app!.screenshot("welcome-720"));
        await page.setViewportSize({ width: 1280, height: 900 });
    });

    it("downloads the chosen model with its progress, loads it and opens a chat on it, whose answer comes from that model", async () => {
        const { page } = app!;
        const welcome = page.getByRole("region", { name: "Welcome to Kvault" });
        const before = (await readApp(page)).items.length;
        await welcome.getByRole("button", { name: /^Download Qwen 3 0\.6B Q4_K_M \(0\.4 GB\) and chat with it$/ }).click();
        await expect
            .poll(() => huggingFace!.requests, { timeout: 30_000 })
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
        screenshots.push(await app!.screenshot("welcome-chat"));
        expect(app!.problems).toEqual([]);
    });
});
