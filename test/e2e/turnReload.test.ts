import { describe, expect, it } from "vitest";
import { configureWorkspace, readApp, sendMessage, storedWorkspaces, waitForWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// Issue 14, item 8, in a real browser: an answer belongs to the server, not to the page that asked
// for it. Reloading mid-answer neither cancels nor loses it: the reloaded page attaches to the
// running turn, shows what was written so far and the rest as it comes, and the server keeps it.
describe("an answer being written survives a page reload", () => {
    const { app, screenshots } = useKvaultApp({
        // 20 ms per token (the streaming demo mode): 120 tokens last seconds, long enough to reload
        // mid-answer, however fast this machine decodes them.
        serveArgs: ["--stream-demo", "20"]
    });

    it("reloads mid-answer, sees the answer continue and finish, and finds it stored", async () => {
        const { page } = app();
        // The generated model answers this greedily to the full 400 tokens; 120 of them are long enough to reload mid-answer.
        await configureWorkspace(page, { temperature: 0, maxTokens: 120 });
        await sendMessage(page, "Write a long answer about pages, please");
        await expect.poll(async () => (await readApp(page)).items[0]!.streamedChars, { timeout: 60_000, interval: 100 }).toBeGreaterThan(3);
        const before = (await readApp(page)).items[0]!.streamedChars;

        await page.reload();
        await page.locator('[data-connection="open"]').waitFor({ timeout: 30_000 });
        await waitForWorkspaces(page);
        // Attached again: the live answer is back with at least what the old page had seen, or (on a fast machine) already kept.
        await expect
            .poll(
                async () => {
                    const [item] = (await readApp(page)).items;
                    return item!.streamedChars >= before || item!.numMessages === 2;
                },
                { timeout: 60_000, interval: 100 }
            )
            .toBe(true);
        screenshots.push(await app().screenshot("answer-after-reload"));

        await expect
            .poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), {
                timeout: 240_000,
                interval: 250
            })
            .toEqual(["user", "assistant"]);
        const answer = (await storedWorkspaces(page))[0]!.messages[1]!;
        expect(answer).toMatchObject({ role: "assistant", finish: "length", usage: { completionTokens: 120 } });
        expect(answer.content.length).toBeGreaterThan(before);
        await expect.poll(async () => (await readApp(page)).items[0]!.phase, { timeout: 30_000 }).toBe("idle");
        // Shown once, as Markdown (so not byte for byte the stored text).
        expect(await page.locator(".message-assistant:not(.message-live)").count()).toBe(1);
        expect(await page.locator(".message-live").count()).toBe(0);

        // Once more after the answer ended: it is the chat's, once.
        await page.reload();
        await waitForWorkspaces(page);
        expect(await page.locator(".message-assistant").count()).toBe(1);
        expect((await storedWorkspaces(page))[0]!.messages).toHaveLength(2);
        expect(app().problems).toEqual([]);
    });
});
