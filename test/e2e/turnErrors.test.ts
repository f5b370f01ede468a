import { describe, expect, it } from "vitest";
import { configureWorkspace, newWorkspace, readApp, sendMessage, storedWorkspaces, waitForWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

describe("a turn that fails in the engine, in a real browser", () => {
    const { app, server, screenshots } = useKvaultApp({
        // 10 ms per token (the streaming demo mode): the generated model's 400-token answer lasts
        // seconds, long enough to press Esc mid-answer, however fast this machine decodes it.
        serveArgs: ["--stream-demo", "10"]
    });

    it("shows the engine's error in place of the answer and never stores it, nor the text streamed before it", async () => {
        const { page } = app();
        // The generated model answers this greedily to the full 400 tokens: long enough to crash mid-answer.
        await configureWorkspace(page, { temperature: 0, maxTokens: 400 });
        await sendMessage(page, "Write a long answer about pages, please");
        await expect.poll(async () => (await readApp(page)).items[0]!.streamedChars, { timeout: 60_000, interval: 100 }).toBeGreaterThan(0);
        const partial = (await page.locator(".message-live .message-text").textContent()) ?? "";

        // The engine process dies mid-answer (a native crash); the server restarts it by itself.
        const enginePid = server().enginePid();
        expect(enginePid, "the server's engine process").toBeDefined();
        process.kill(enginePid!, "SIGKILL");

        const alert = page.getByRole("alert");
        await expect
            .poll(() => alert.textContent(), { timeout: 60_000 })
            .toMatch(/The engine process stopped \(SIGKILL\) while this turn ran\./);
        expect(await alert.getAttribute("data-error-code")).toBe("engine_crashed");
        screenshots.push(await app().screenshot("error-in-place"));

        expect(await page.locator(".message-assistant").count(), "no answer on screen").toBe(0);
        const stored = (await storedWorkspaces(page))[0]!.messages;
        expect(stored).toEqual([expect.objectContaining({ role: "user", content: "Write a long answer about pages, please" })]);
        expect(JSON.stringify(stored)).not.toContain("engine process stopped");
        if (partial.length > 3) {
            expect(JSON.stringify(stored)).not.toContain(JSON.stringify(partial).slice(1, -1));
        }

        // A reload keeps the chat and forgets the error: it was never part of the chat.
        await page.reload();
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        await waitForWorkspaces(page);
        expect(await page.getByRole("alert").count()).toBe(0);
        expect(await page.locator(".message-user").count()).toBe(1);
        expect(await page.locator(".message-assistant").count()).toBe(0);
        expect(await page.locator(".no-answer").textContent()).toContain("No answer to this message.");
        expect(app().problems).toEqual([]);
    });

    it("answers on Ask again once the engine is back, and Esc stops an answer, keeping what streamed", async () => {
        const { page } = app();
        await configureWorkspace(page, { maxTokens: 8 });
        await page.getByRole("button", { name: "Ask for an answer again" }).click();
        await expect
            .poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), {
                timeout: 180_000,
                interval: 250
            })
            .toEqual(["user", "assistant"]);

        // A fresh workspace, so the greedy answer is the known 400-token one.
        const other = await newWorkspace(page);
        await configureWorkspace(page, { temperature: 0, maxTokens: 400 });
        await sendMessage(page, "Tell me everything about the first page of the pool");
        const item = async () => (await readApp(page)).items.find((candidate) => candidate.id === other.id)!;
        await expect.poll(async () => (await item()).streamedChars, { timeout: 60_000, interval: 100 }).toBeGreaterThan(0);
        await page.keyboard.press("Escape");
        await expect.poll(async () => (await item()).phase, { timeout: 60_000 }).toBe("idle");
        const stored = (await storedWorkspaces(page)).find((workspace) => workspace.id === other.id)!.messages;
        expect(stored.map((message) => message.role)).toEqual(["user", "assistant"]);
        expect(stored[1]).toMatchObject({ finish: "stopped" });
        expect(stored[1]!.content.length).toBeGreaterThan(0);
        expect(await page.locator(".message-assistant").last().textContent()).toContain("Stopped by you.");
        await expect
            .poll(async () => Number(await page.locator('[data-counter="cancelled"]').getAttribute("data-value")), { timeout: 10_000 })
            .toBe(1);
        screenshots.push(await app().screenshot("stopped-answer-kept"));

        // Regenerate replaces the stopped answer with a whole one.
        await configureWorkspace(page, { maxTokens: 8 });
        await page.getByRole("button", { name: "Regenerate the answer" }).click();
        await expect
            .poll(async () => (await storedWorkspaces(page)).find((workspace) => workspace.id === other.id)!.messages.at(-1)!.finish, {
                timeout: 120_000
            })
            .toMatch(/^(stop|length)$/);
        expect(
            (await storedWorkspaces(page)).find((workspace) => workspace.id === other.id)!.messages.map((message) => message.role)
        ).toEqual(["user", "assistant"]);
        expect(app().problems).toEqual([]);
    });
});
