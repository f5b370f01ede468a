import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureFamilyModel } from "../support/generatedModels.js";
import { startLlamaServer, type LlamaServer } from "../support/llamaServer.js";
import { wholeCharacterBiasArgs } from "../bench/peer/wholeCharacterBiasArgs.js";
import { openServerPanel, readApp, sendMessage, showChats, storedWorkspaces } from "./support/appDriver.js";
import type { KvaultPage } from "./support/openKvault.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// A remote backend added on the settings screen, in a real browser, against a real headless server
// started with no --backend and a real llama-server on loopback (the generated llama3-tiny): it is
// listed with its model, a workspace runs on it at once, a reopened server has it again from
// settings.json (whose key the page never receives), and once removed the workspace says so.

/** Keeps every WebSocket message the page receives, from before the app starts, in window.__received. */
const recordReceived = `(() => {
    window.__received = [];
    const Original = window.WebSocket;
    window.WebSocket = class extends Original {
        constructor(...args) {
            super(...args);
            this.addEventListener("message", (event) => window.__received.push(String(event.data)));
        }
    };
})()`;

const secret = "sk-e2e-backend-key-0123456789";

describe("remote backends set on the settings screen, in a real browser", () => {
    let llama: LlamaServer;

    beforeAll(async () => {
        // its answers kept to whole characters, else its own chat parser ends some with a 500, as the random weights and the machine's sums decide (wholeCharacterBiasArgs)
        const model = ensureFamilyModel("llama3-tiny", "f16");
        llama = await startLlamaServer(model, ["--alias", "llama3-tiny", "--ctx-size", "2048", ...(await wholeCharacterBiasArgs(model))]);
    }, 300_000);

    afterAll(async () => {
        await llama?.stop();
    });

    // without --backend the settings' backends are in force
    const kvault = useKvaultApp({
        viewport: { width: 1280, height: 1800 },
        initScript: recordReceived,
        prepare: ({ page }) => openServerPanel(page)
    });
    const settingsFile = (): string => path.join(kvault.server().dataDir, "settings.json");
    const received = (app: KvaultPage): Promise<string> => app.page.evaluate<string>("window.__received.join('\\n')");
    const saved = (): { backends: unknown[] } => JSON.parse(fs.readFileSync(settingsFile(), "utf8")) as { backends: unknown[] };

    it("adds llama-server, runs a workspace on it, finds it again after a restart without its key in the page, and removes it", async () => {
        const server = kvault.server();
        const app = kvault.app();
        const { page } = app;
        const section = page.locator('section[aria-labelledby="backends-heading"]');
        expect(await section.getAttribute("data-backends-source")).toBe("settings");
        expect(await section.textContent()).toContain("No remote backends.");

        await page.getByLabel(/^Name \(letters/).fill("ls");
        await page.getByLabel(/^URL \(its OpenAI base URL/).fill(llama.url);
        await page.getByLabel(/^Key \(optional/).fill(secret);
        await page.getByRole("button", { name: "Add the backend" }).click();
        const entry = section.locator('[data-backend="ls"]');
        await expect
            .poll(() => entry.locator("[data-backend-status]").textContent(), { timeout: 30_000 })
            .toBe("Models: llama3-tiny (window 2,048)");
        expect(await entry.textContent()).toContain(`ls at ${llama.url}/v1, key set`);
        expect(saved().backends).toEqual([{ name: "ls", url: llama.url, key: secret, allowRemote: false }]);
        expect(fs.statSync(settingsFile()).mode & 0o777).toBe(0o600);
        await section.scrollIntoViewIfNeeded();
        kvault.screenshots.push(await app.screenshot("settings-backends"));

        // Edited in place: the model narrowed to one, the key kept (the key field left empty).
        await page.getByRole("button", { name: "Edit the backend ls" }).click();
        expect(await page.getByLabel(/^Name \(letters/).isDisabled()).toBe(true);
        await page.getByLabel(/^Model \(optional/).fill("llama3-tiny");
        await page.getByRole("button", { name: "Save the backend ls" }).click();
        await expect
            .poll(() => entry.textContent(), { timeout: 30_000 })
            .toContain(`ls at ${llama.url}/v1, model llama3-tiny only, key set`);
        expect(saved().backends).toEqual([{ name: "ls", url: `${llama.url}/v1`, model: "llama3-tiny", key: secret, allowRemote: false }]);

        // The isolation panel's leak probe, mounted since the page opened, offers it too.
        await expect
            .poll(() => page.getByLabel("Probe target", { exact: true }).locator("option").allTextContents(), { timeout: 30_000 })
            .toEqual(["This Kvault's API", "ls: llama3-tiny"]);

        // The workspace already open lists it at once: no restart.
        await showChats(page);
        const details = page.locator(".workspace-settings");
        await details.locator("summary").click();
        const runsOn = page.getByLabel("Runs on", { exact: true });
        await expect
            .poll(() => runsOn.locator("option").allTextContents(), { timeout: 30_000 })
            .toEqual(["This computer", "ls: llama3-tiny (window 2,048)"]);
        await runsOn.selectOption("ls/llama3-tiny");
        await page.getByLabel("Temperature", { exact: true }).fill("0");
        await page.getByLabel("Max tokens", { exact: true }).fill("8");
        await details.locator("summary").click();
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
        expect(await received(app)).not.toContain(secret);
        expect(server.stderr()).not.toContain(secret);
        expect(server.stderr()).toContain(`Settings: backend "ls" added: ${llama.url}/v1, with a key.`);
        expect(server.stderr()).toContain(`Settings: backend "ls" changed: ${llama.url}/v1, model llama3-tiny, with a key.`);
        expect(app.problems).toEqual([]);

        // Reopened: the backend is there from settings.json, still with its key, which the page is never sent.
        await kvault.restart();
        const again = { server: kvault.server(), app: kvault.app() };
        const section2 = again.app.page.locator('section[aria-labelledby="backends-heading"]');
        const entry2 = section2.locator('[data-backend="ls"]');
        await expect
            .poll(() => entry2.locator("[data-backend-status]").textContent(), { timeout: 30_000 })
            .toBe("Models: llama3-tiny (window 2,048)");
        expect(await entry2.locator("[data-backend-key]").textContent()).toBe(", key set");
        expect(again.server.stderr()).toContain(`Backend "ls" (settings): ${llama.url}/v1, model llama3-tiny, with a key.`);

        // Removed: gone from the screen and the file, and the workspace on it says what happened and what to do.
        await again.app.page.getByRole("button", { name: "Remove the backend ls" }).click();
        await expect.poll(() => section2.textContent(), { timeout: 30_000 }).toContain("No remote backends.");
        expect(saved().backends).toEqual([]);
        await sendMessage(again.app.page, "Are you there?");
        const alert = again.app.page.locator('[role="alert"][data-error-code]');
        await expect
            .poll(() => alert.textContent(), { timeout: 60_000 })
            .toContain(
                'runs on backend "ls" (llama3-tiny), which this Kvault does not have now: it was not started with it, or it was removed in the settings.'
            );
        expect(await alert.getAttribute("data-error-code")).toBe("backend_not_found");
        expect(await received(again.app)).not.toContain(secret);
        expect(again.server.stderr()).not.toContain(secret);
        expect(again.app.problems).toEqual([]);
    });

    it("shows --backend's backends as the command line's for that run, not editable, and leaves settings.json's as they are", async () => {
        const stored = [{ name: "ls", url: llama.url, allowRemote: false }];
        await kvault.restart({
            serveArgs: ["--backend", `cli=${llama.url}`],
            whileStopped: (dataDir) => {
                const file = path.join(dataDir, "settings.json");
                fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, "utf8")), backends: stored }));
            }
        });
        const server = kvault.server();
        const app = kvault.app();
        const section = app.page.locator('section[aria-labelledby="backends-heading"]');
        expect(await section.getAttribute("data-backends-source")).toBe("command line");
        await expect
            .poll(() => section.locator('[data-backend="cli"] [data-backend-status]').textContent(), { timeout: 30_000 })
            .toBe("Models: llama3-tiny (window 2,048)");
        expect(await section.locator("[data-backend]").count()).toBe(1);
        expect(await section.locator("[data-backends-note]").textContent()).toBe(
            "Given on the command line (--backend) for this run, so not editable here; settings.json keeps its own 1 for a start without --backend."
        );
        expect(await section.getByRole("button").count()).toBe(0);
        expect(await section.locator("input").count()).toBe(0);
        expect(server.stderr()).toContain("Settings: --backend is given, so settings.json's 1 backend(s) are not in force for this run.");
        expect(saved().backends).toEqual(stored);
        expect(app.problems).toEqual([]);
    });
});
