import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
    applyEngineSettings,
    configureWorkspace,
    openSettingsPanel,
    planEngineSettings,
    sendMessage,
    storedWorkspaces
} from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";

// Speculative decoding with a draft model, from `npm run serve -- --draft-model` and from the
// settings screen: each answer shows how many drafted tokens the model accepted, the API reports
// them as OpenAI's prediction tokens, and /metrics counts them. The draft is the model itself, so a
// greedy answer has every draft accepted.

describe("speculative decoding with a draft model, in a real browser and over the API", () => {
    const kvault = useKvaultApp({
        serveArgs: () => {
            const model = ensureGeneratedModel("tiny");
            return ["--model", model, "--draft-model", model, "--draft-max", "4", "--draft-p-min", "0"];
        },
        viewport: { width: 1280, height: 900 }
    });
    const poll = { timeout: 120_000, interval: 250 };

    it("shows each answer's accepted drafts, as the stored answer counts them", async () => {
        const { page } = kvault.app();
        await configureWorkspace(page, { temperature: 0, maxTokens: 24 });
        await sendMessage(page, "Tell me about the pages.");
        await expect
            .poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), poll)
            .toEqual(["user", "assistant"]);
        const usage = (await storedWorkspaces(page))[0]!.messages[1]!.usage!;
        expect(usage.completionTokens).toBeGreaterThan(1);
        expect(usage.rejectedDraftTokens).toBe(0);
        expect(usage.acceptedDraftTokens).toBeGreaterThan(0);
        const drafted = usage.acceptedDraftTokens!;
        await expect.poll(() => page.locator(".message-drafts").count(), poll).toBe(1);
        expect(await page.locator(".message-drafts").innerText()).toBe(`drafts ${drafted} of ${drafted} accepted (100 %)`);
    });

    it("reports the drafts as accepted and rejected prediction tokens, and counts them in /metrics", async () => {
        const headers = { Authorization: `Bearer ${kvault.server().apiKey}`, "Content-Type": "application/json" };
        const response = await fetch(`${kvault.server().url}/v1/chat/completions`, {
            method: "POST",
            headers,
            body: JSON.stringify({
                model: "tiny",
                messages: [{ role: "user", content: "Once more, the pages." }],
                max_tokens: 24,
                temperature: 0
            })
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as {
            usage: {
                completion_tokens: number;
                completion_tokens_details?: { accepted_prediction_tokens: number; rejected_prediction_tokens: number };
            };
        };
        const details = body.usage.completion_tokens_details!;
        expect(details.rejected_prediction_tokens).toBe(0);
        expect(details.accepted_prediction_tokens).toBeGreaterThan(0);
        expect(details.accepted_prediction_tokens).toBeLessThan(body.usage.completion_tokens);

        const metrics = await (await fetch(`${kvault.server().url}/metrics`, { headers })).text();
        const accepted = /^kvault_draft_tokens_total\{outcome="accepted"\} (\d+)$/m.exec(metrics);
        expect(Number(accepted?.[1])).toBeGreaterThanOrEqual(details.accepted_prediction_tokens);
        expect(metrics).toMatch(/^kvault_draft_tokens_total\{outcome="rejected"\} 0$/m);
    });
});

describe("speculative decoding chosen on the settings screen", () => {
    const kvault = useKvaultApp({
        // the other browser tests' small engine, in settings.json so that the screen may change it
        files: () => ({
            "settings.json": JSON.stringify({ version: 2, engine: { contextSize: 512, decodeSequences: 2, pageTokens: 16, gpu: "off" } })
        }),
        engineArgs: false,
        serveArgs: () => ["--model", ensureGeneratedModel("tiny")],
        viewport: { width: 1280, height: 1800 }
    });

    it("plans the draft model's memory, restarts the engine with it, keeps it in settings.json, and the next answer shows its drafts", async () => {
        const model = ensureGeneratedModel("tiny");
        const app = kvault.app();
        const { page } = app;
        await openSettingsPanel(page);
        const panel = page.locator("#view-settings .settings-panel");

        await page.getByLabel("Speculative decoding").selectOption("draft-model");
        expect(await panel.locator(".settings-error").textContent()).toBe(
            "Speculative decoding is Draft model; give the draft model's full path."
        );
        expect(await page.getByRole("button", { name: "Show the memory it takes" }).isDisabled()).toBe(true);
        await page.getByLabel("Draft model (GGUF path)").fill(model);
        const plan = await planEngineSettings(page);
        expect(await plan.getAttribute("data-fits")).toBe("yes");
        expect(await plan.locator('[data-memory="draftWeights"]').textContent()).toMatch(
            /^Draft model weights \(the file's size\)[\d.]+ \w+RAM$/
        );
        // the tiny model's token takes 512 bytes of F16 KV: 512 tokens × 2 sequences of it for the draft
        expect(await plan.locator('[data-memory="draftKv"]').textContent()).toBe(
            "KV of the draft model: 512 tokens × 2 sequences × 512 bytes (F16)512 KiBRAM"
        );

        await applyEngineSettings(page);
        const saved = JSON.parse(fs.readFileSync(path.join(kvault.server().dataDir, "settings.json"), "utf8")) as {
            engine: Record<string, unknown>;
        };
        expect(saved.engine).toMatchObject({ speculation: "draft-model", draftModel: model });

        await configureWorkspace(page, { temperature: 0, maxTokens: 24 });
        await sendMessage(page, "Tell me about the pages.");
        const poll = { timeout: 120_000, interval: 250 };
        await expect
            .poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), poll)
            .toEqual(["user", "assistant"]);
        const usage = (await storedWorkspaces(page))[0]!.messages[1]!.usage!;
        expect(usage.acceptedDraftTokens).toBeDefined();
        const drafted = usage.acceptedDraftTokens! + usage.rejectedDraftTokens!;
        await expect.poll(() => page.locator(".message-drafts").count(), poll).toBe(1);
        // the draft drafts only tokens it gives 60 % or more (the default): the random-weight model may give none
        expect(await page.locator(".message-drafts").innerText()).toBe(
            drafted === 0 ? "no drafts" : `drafts ${usage.acceptedDraftTokens} of ${drafted} accepted (100 %)`
        );
        expect(app.problems).toEqual([]);
    });
});
