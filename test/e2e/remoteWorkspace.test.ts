import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureFamilyModel } from "../support/generatedModels.js";
import { startLlamaServer, type LlamaServer } from "../support/llamaServer.js";
import { wholeCharacterBiasArgs } from "../bench/peer/wholeCharacterBiasArgs.js";
import { readApp, sendMessage, storedWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// A workspace on a remote backend in a real browser: its settings' Runs on lists llama-server's
// model (a real llama-server on loopback, on the generated llama3-tiny), the meter then shows the
// server's own counts and window with their sources, and a message is answered by the backend.
describe("a workspace on a remote backend, in the browser", () => {
    let llama: LlamaServer;

    // Registered before the app's hooks: llama-server listens before the server is pointed at it, and stops after the server.
    beforeAll(async () => {
        // its answers kept to whole characters, else its own chat parser ends some with a 500, as the random weights and the machine's sums decide (wholeCharacterBiasArgs)
        const model = ensureFamilyModel("llama3-tiny", "f16");
        llama = await startLlamaServer(model, ["--alias", "llama3-tiny", "--ctx-size", "2048", ...(await wholeCharacterBiasArgs(model))]);
    }, 300_000);
    afterAll(async () => {
        await llama?.stop();
    });

    const kvault = useKvaultApp({ serveArgs: () => ["--backend", `ls=${llama.url}`] });

    it("is chosen in the settings, metered by the server, and answered by it", async () => {
        const { page } = kvault.app();
        const details = page.locator(".workspace-settings");
        if ((await details.getAttribute("open")) === null) {
            await details.locator("summary").click();
        }
        const runsOn = page.getByLabel("Runs on", { exact: true });
        await expect
            .poll(() => runsOn.locator("option").allTextContents(), { timeout: 30_000 })
            .toEqual(["This computer", "ls: llama3-tiny (window 2,048)"]);
        await runsOn.selectOption("ls/llama3-tiny");
        await page.getByLabel("Temperature", { exact: true }).fill("0");
        await page.getByLabel("Max tokens", { exact: true }).fill("8");
        await details.locator("summary").click();

        await page.getByLabel("Message", { exact: true }).fill("Hello there");
        const meter = page.getByLabel("Context meter");
        await expect.poll(() => meter.getAttribute("data-limit"), { timeout: 30_000 }).toBe("2048");
        expect(await page.locator('[data-remote-source="tokens"]').textContent()).toBe(
            "Tokens counted by backend ls (llama3-tiny): llama.cpp /apply-template + /tokenize"
        );
        expect(await page.locator('[data-remote-source="window"]').textContent()).toBe(
            "Window 2,048 from /v1/models meta.n_ctx (per slot)"
        );
        expect(await page.locator('[data-remote-source="kv"]').textContent()).toMatch(/^KV usage not shown: /);

        await sendMessage(page, "Hello there");
        await expect.poll(async () => (await readApp(page)).items[0]!.numMessages, { timeout: 60_000 }).toBe(2);
        const stored = (await storedWorkspaces(page))[0]!;
        expect(stored.backend).toEqual({ name: "ls", model: "llama3-tiny" });
        const direct = (await (
            await fetch(`${llama.url}/v1/chat/completions`, {
                method: "POST",
                body: JSON.stringify({
                    model: "llama3-tiny",
                    messages: [{ role: "user", content: "Hello there" }],
                    temperature: 0,
                    max_tokens: 8
                })
            })
        ).json()) as { choices: { message: { content: string } }[] };
        expect(stored.messages.map((message) => message.content)).toEqual(["Hello there", direct.choices[0]!.message.content]);
        expect(kvault.app().problems).toEqual([]);
        await kvault.app().screenshot("remote-workspace");
    });
});
