import fs from "node:fs";
import { describe, expect, it } from "vitest";
import type { StoredWorkspace } from "../../contract/workspaces.js";
import { configureWorkspace, sendMessage, storedState, storedWorkspaces, waitForWorkspaces } from "./support/appDriver.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

// Edit and branches, search, export and import, duplicate and settings, against the headless
// server and its built-in model: every change is checked where the server keeps it (its
// loadWorkspaces, then a new server on the same data directory).
describe("conversation controls in a real browser", () => {
    const kvault = useKvaultApp({ viewport: { width: 1280, height: 1000 } });
    const poll = { timeout: 120_000, interval: 250 };
    const first = async (): Promise<StoredWorkspace> => (await storedWorkspaces(kvault.app().page))[0]!;
    const shot = async (name: string): Promise<void> => {
        kvault.screenshots.push(await kvault.app().screenshot(`chat-controls-${name}`));
    };

    it("uses the workspace's settings: Max tokens 3 gives an answer of 3 tokens, with its time to first token", async () => {
        const { page } = kvault.app();
        await configureWorkspace(page, { temperature: 0, maxTokens: 3 });
        await sendMessage(page, "Hello");
        await expect.poll(async () => (await first()).messages.map((message) => message.role), poll).toEqual(["user", "assistant"]);
        const answer = (await first()).messages[1]!;
        expect(answer.usage?.completionTokens).toBe(3);
        expect(answer.finish).toBe("length");
        expect(answer.timing?.firstTokenMs).toBeGreaterThanOrEqual(0);
        await expect.poll(() => page.locator(".message-timing").count(), poll).toBe(1);
        expect(await page.locator(".message-timing").innerText()).toMatch(/^first token \d/);
    });

    it("regenerates as a branch and moves between the versions with the arrows", async () => {
        const { page } = kvault.app();
        const earlier = (await first()).messages[1]!;
        await page.getByRole("button", { name: "Regenerate the answer" }).click();
        await expect.poll(async () => (await first()).branches?.map((message) => message.id), poll).toEqual([earlier.id]);
        const arrows = page.getByRole("group", { name: "Version 2 of 2 of the answer" });
        await arrows.waitFor();
        await page.getByRole("button", { name: "Show the previous version of the answer" }).click();
        await page.getByRole("group", { name: "Version 1 of 2 of the answer" }).waitFor();
        await expect.poll(async () => (await first()).messages[1]?.id, poll).toBe(earlier.id);
        await shot("branch");
    });

    it("edits a sent message and resends it: the old message and its answers stay a version away", async () => {
        const { page } = kvault.app();
        const before = await first();
        await page.getByRole("button", { name: "Edit your message" }).click();
        await page.getByRole("textbox", { name: "Edit your message" }).fill("Hello again");
        await page.getByRole("button", { name: "Send the edited message" }).click();
        await expect.poll(async () => (await first()).messages.map((message) => message.content)[0], poll).toBe("Hello again");
        await expect.poll(async () => (await first()).messages.length, poll).toBe(2);
        const after = await first();
        expect([...after.messages, ...(after.branches ?? [])]).toHaveLength(before.messages.length + (before.branches ?? []).length + 2);
        await page.getByRole("group", { name: "Version 2 of 2 of your message" }).waitFor();
        await shot("edit");
    });

    it("finds a message across workspaces and opens it", async () => {
        const { page } = kvault.app();
        await page.getByRole("button", { name: "New workspace" }).click();
        await page.getByLabel("Search workspaces and messages").fill("again");
        const hit = page.locator(".search-hit", { hasText: "Hello again" });
        await hit.waitFor();
        await shot("search");
        await hit.click();
        await page.locator(".chat-view", { has: page.locator(".message-user", { hasText: "Hello again" }) }).waitFor();
        await page.getByLabel("Search workspaces and messages").fill("");
    });

    it("exports the chat as Markdown and JSON, and imports the JSON back as a new workspace with every branch", async () => {
        const { page } = kvault.app();
        const source = await first();
        const [markdown] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: /as Markdown$/ }).click()]);
        const markdownText = fs.readFileSync((await markdown.path())!, "utf8");
        expect(markdownText).toContain("## You\n\nHello again\n");
        const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: /as JSON$/ }).click()]);
        const jsonFile = (await json.path())!;
        const exported = JSON.parse(fs.readFileSync(jsonFile, "utf8")) as { messages: unknown; branches: unknown };
        expect(exported.messages).toEqual(source.messages);
        expect(exported.branches).toEqual(source.branches);

        const count = (await storedWorkspaces(page)).length;
        await page.setInputFiles('input[aria-label="Chat file to import"]', jsonFile);
        await expect.poll(async () => (await storedWorkspaces(page)).length, poll).toBe(count + 1);
        const imported = (await storedWorkspaces(page)).at(-1)!;
        expect([imported.name, imported.messages, imported.branches]).toEqual([source.name, source.messages, source.branches]);

        await page.setInputFiles('input[aria-label="Chat file to import"]', {
            name: "bad.json",
            mimeType: "application/json",
            buffer: Buffer.from('{"format":"kvault-chat","version":1,"workspace":{"name":"X","colour":0,"settings":{}},"messages":[]}')
        });
        await expect(page.getByRole("alert").filter({ hasText: "bad.json" }).innerText()).resolves.toMatch(
            /bad\.json: This file cannot be imported as a chat: workspace: settings\.systemPrompt .*nothing was imported\./
        );
        expect(await storedWorkspaces(page)).toHaveLength(count + 1);
    });

    it("duplicates a workspace, deletes a message, asks before clearing, and a new server reads back exactly what was saved", async () => {
        const { page } = kvault.app();
        await page.locator(".workspace-item").first().click();
        const source = await first();
        await page.getByRole("button", { name: `Duplicate ${source.name}` }).click();
        await expect
            .poll(async () => (await storedWorkspaces(page)).map((workspace) => workspace.name), poll)
            .toContain(`${source.name} (copy)`);

        await page.locator(".workspace-item").first().click();
        await page.getByRole("button", { name: "Delete the answer" }).click();
        await expect.poll(async () => (await first()).messages.length, poll).toBe(1);

        await page.locator(".workspace-settings summary").click();
        await page.getByRole("button", { name: "Clear this workspace's chat" }).click();
        await page.getByRole("dialog").waitFor();
        await page.getByRole("button", { name: "Keep the chat" }).click();
        expect((await first()).messages.length).toBe(1);

        const saved = await storedState(page);
        await kvault.restart();
        await waitForWorkspaces(kvault.app().page);
        expect(await storedState(kvault.app().page)).toEqual(saved);
    });
});
