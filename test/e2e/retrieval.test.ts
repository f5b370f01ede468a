import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { RetrievedChunk } from "../../contract/retrieval.js";
import { configureWorkspace, newWorkspace, storedWorkspaces } from "./support/appDriver.js";
import { rpcFromPage } from "./support/rpcFromPage.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

/** Every chunk a message cites: its file and its place. */
const citations = (content: string): { file: string; index: number }[] =>
    [...content.matchAll(/<chunk file="([^"]+)" index="(\d+)">/g)].map((match) => ({ file: match[1]!, index: Number(match[2]) }));

// Retrieval against the headless server's generated model, which writes random text: the test
// counts chunks and citations, never what the answer says. The window is 512 tokens, so the file
// below does not fit whole and goes into the workspace's own index.
describe("retrieval from files too large to fit, per workspace, in a real browser", () => {
    const { app, server } = useKvaultApp({ viewport: { width: 1280, height: 1000 } });
    const poll = { timeout: 120_000, interval: 250 };
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-retrieval-"));
    const question = "Which line talks about the sealed pages?";
    const turnOn = async (): Promise<void> => {
        const { page } = app();
        await page.locator(".workspace-settings summary").click();
        await page.getByLabel("Retrieve from files too large to fit").click();
        await page.locator('.retrieval-switch[data-retrieval="on"]').waitFor();
        await page.locator(".workspace-settings summary").click();
    };
    let firstId = "";
    let cited: { file: string; index: number }[] = [];

    it("indexes a file too large to fit in the workspace's own index and answers with the chunks it used cited in the message", async () => {
        const { page } = app();
        await configureWorkspace(page, { temperature: 0, maxTokens: 8 });
        await turnOn();
        const big = path.join(directory, "manual.txt");
        fs.writeFileSync(
            big,
            Array.from({ length: 300 }, (_, index) => `Line ${index} says the sealed pages stay in their workspace.`).join("\n")
        );
        await page.setInputFiles('input[aria-label="Files to attach"]', big);
        const chip = page.locator('.attachment-chip[data-file-name="manual.txt"]');
        await expect.poll(async () => Number(await chip.getAttribute("data-num-chunks")), poll).toBeGreaterThan(10);
        const numChunks = Number(await chip.getAttribute("data-num-chunks"));
        firstId = (await storedWorkspaces(page))[0]!.id;
        const indexFile = path.join(server().dataDir, "retrieval", `${firstId}.json`);
        expect(fs.existsSync(indexFile)).toBe(true);

        await page.getByLabel("Message", { exact: true }).fill(question);
        await page.getByLabel("Message", { exact: true }).press("Enter");
        await expect
            .poll(async () => (await storedWorkspaces(page))[0]!.messages.map((message) => message.role), poll)
            .toEqual(["user", "assistant"]);
        const sent = (await storedWorkspaces(page))[0]!.messages[0]!.content;
        cited = citations(sent);
        expect(cited.length).toBeGreaterThanOrEqual(1);
        expect(cited.length).toBeLessThanOrEqual(3);
        expect(cited.every(({ file, index }) => file === "manual.txt" && index < numChunks)).toBe(true);
        expect(sent.endsWith(question)).toBe(true);
        await expect.poll(() => page.locator(".message").filter({ hasText: '<chunk file="manual.txt"' }).count(), poll).toBe(1);
    });

    it("never lets a second workspace's turn reach the first one's index; deleting the first deletes its index", async () => {
        const { page } = app();
        const second = await newWorkspace(page);
        await configureWorkspace(page, { temperature: 0, maxTokens: 8 });
        await turnOn();
        const firstChunkText = (await storedWorkspaces(page))[0]!.messages[0]!.content.split("\n")[1]!;
        // The same question finds the first workspace's chunks in its own index, and nothing in the second's.
        const own = await rpcFromPage<RetrievedChunk[]>(page, "retrieveChunks", {
            workspace: firstId,
            query: firstChunkText,
            maxChunks: 3
        });
        expect(own.length).toBeGreaterThan(0);
        expect(
            await rpcFromPage<RetrievedChunk[]>(page, "retrieveChunks", { workspace: second.id, query: firstChunkText, maxChunks: 3 })
        ).toEqual([]);

        await page.getByLabel("Message", { exact: true }).fill(question);
        await page.getByLabel("Message", { exact: true }).press("Enter");
        const secondChat = async () => (await storedWorkspaces(page)).find((workspace) => workspace.id === second.id)!.messages;
        await expect.poll(async () => (await secondChat()).map((message) => message.role), poll).toEqual(["user", "assistant"]);
        expect((await secondChat())[0]!.content).toBe(question);
        expect(citations((await secondChat())[0]!.content)).toEqual([]);

        await rpcFromPage(page, "removeWorkspace", { workspace: firstId });
        expect(fs.existsSync(path.join(server().dataDir, "retrieval", `${firstId}.json`))).toBe(false);
        expect(await rpcFromPage<{ enabled: boolean }>(page, "retrievalStatus", { workspace: firstId })).toEqual({
            enabled: false,
            files: []
        });
        fs.rmSync(directory, { recursive: true, force: true });
    });
});
