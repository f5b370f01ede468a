import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { encodeJournalRecord } from "../../host/store/journalRecords.js";
import { configureWorkspace, readApp, sendMessage, storedState, storedWorkspaces, waitForWorkspaces } from "./support/appDriver.js";
import type { KvaultPage } from "./support/openKvault.js";
import { useKvaultApp } from "./support/useKvaultApp.js";

/** The messages on screen, finished ones only. */
const onScreen = (page: KvaultPage["page"]) =>
    page.evaluate<{ role: string; text: string }[]>(`[...document.querySelectorAll(".message-user, .message-assistant:not(.message-live)")]
    .map((element) => ({ role: element.classList.contains("message-user") ? "user" : "assistant", text: element.querySelector(".message-text")?.textContent ?? "" }))`);

// The chats live on the server's disk (--data-dir/workspaces/), not in the browser: each test
// opens a fresh browser profile, so whatever it sees after a restart came from the server.
describe("saved chats in a real browser", () => {
    describe("a chat kept through a reload and a restart", () => {
        const kvault = useKvaultApp();

        it("keeps a chat through a page reload, and through a new server on the same data directory", async () => {
            const { page } = kvault.app();
            await configureWorkspace(page, { temperature: 0, maxTokens: 8 });
            await page.getByRole("button", { name: "Rename Workspace 1" }).click();
            await page.getByLabel("Workspace name").fill("Kept chat");
            await page.getByLabel("Workspace name").press("Enter");
            await sendMessage(page, "Remember this, please");
            await expect
                .poll(async () => (await storedWorkspaces(page))[0]?.messages.map((message) => message.role), {
                    timeout: 120_000,
                    interval: 250
                })
                .toEqual(["user", "assistant"]);
            const before = await onScreen(page);
            expect(before.map((message) => message.role)).toEqual(["user", "assistant"]);
            expect(before[0]!.text).toBe("Remember this, please");

            await page.reload();
            await waitForWorkspaces(page);
            expect((await readApp(page)).items.map((item) => [item.name, item.numMessages])).toEqual([["Kept chat", 2]]);
            expect(await onScreen(page)).toEqual(before);

            await kvault.restart({
                whileStopped: async (dataDir) => {
                    const lines = fs
                        .readFileSync(path.join(dataDir, "workspaces", `${(await storedWorkspacesFromDisk(dataDir))[0]!.id}.jsonl`), "utf8")
                        .trim()
                        .split("\n");
                    expect(lines.map((line) => (JSON.parse(line) as { v: number; op: string; role: string }).role)).toEqual([
                        "user",
                        "assistant"
                    ]);
                }
            });

            const second = kvault.app();
            expect((await readApp(second.page)).items.map((item) => [item.name, item.numMessages])).toEqual([["Kept chat", 2]]);
            expect(await onScreen(second.page)).toEqual(before);
            const details = second.page.locator(".workspace-settings");
            await details.locator("summary").click();
            expect(await second.page.getByLabel("Max tokens", { exact: true }).inputValue()).toBe("8");
            expect(second.problems).toEqual([]);
        });
    });

    describe("chats an older Kvault kept in the browser", () => {
        const settings = { systemPrompt: "", temperature: 0, maxTokens: 8 };
        // Format 1, as the renderer persisted it (zustand persist, version 1).
        const legacy = JSON.stringify({
            state: {
                workspaces: [
                    {
                        id: "ui-0123456789abcdef0123456789abcdef",
                        name: "Old notes",
                        colour: 4,
                        settings,
                        messages: [
                            { id: "m-0123456789abcdef0123456789abcdef", role: "user", content: "An old question" },
                            { id: "m-fedcba9876543210fedcba9876543210", role: "assistant", content: "An old answer", finish: "stop" }
                        ]
                    },
                    { id: "ui-fedcba9876543210fedcba9876543210", name: "Old drafts", colour: 1, settings, messages: [] }
                ],
                selectedId: "ui-0123456789abcdef0123456789abcdef"
            },
            version: 1
        });
        const kvault = useKvaultApp({ initScript: `localStorage.setItem("kvault.workspaces", ${JSON.stringify(legacy)});` });

        it("on the first start after an upgrade, takes over the chats an older Kvault kept in the browser's localStorage", async () => {
            const { page } = kvault.app();
            const dataDir = kvault.server().dataDir;
            expect((await readApp(page)).items.map((item) => [item.name, item.numMessages])).toEqual([
                ["Old notes", 2],
                ["Old drafts", 0]
            ]);
            expect(await onScreen(page)).toEqual([
                { role: "user", text: "An old question" },
                { role: "assistant", text: "An old answer" }
            ]);
            expect((await storedWorkspaces(page)).map((workspace) => workspace.name)).toEqual(["Old notes", "Old drafts"]);
            expect(
                await page.evaluate(
                    `[localStorage.getItem("kvault.workspaces"), localStorage.getItem("kvault.workspaces.imported") !== null]`
                )
            ).toEqual([null, true]);
            const kept = fs.readdirSync(path.join(dataDir, "workspaces")).filter((name) => name.startsWith("imported-v1-"));
            expect(kept).toHaveLength(1);
            expect(fs.readFileSync(path.join(dataDir, "workspaces", kept[0]!), "utf8")).toBe(legacy);
            expect(kvault.app().problems).toEqual([]);
        });
    });

    describe("a damaged chat file", () => {
        const settings = { systemPrompt: "", temperature: 0, maxTokens: 8 };
        const message = (id: string, role: "user" | "assistant", content: string): string =>
            encodeJournalRecord({ op: "message", message: { id, role, content } });
        const original =
            message("m-1", "user", "First question") +
            message("m-2", "assistant", "First answer") +
            '{"v":2,"op":"message","id":"m-3","role":"user","con\n' +
            message("m-4", "user", "Second question") +
            message("m-5", "assistant", "Second answer") +
            message("m-6", "user", "Third question, being written when Kvault stopped").slice(0, 40);
        const kvault = useKvaultApp({
            files: () => ({
                "workspaces/index.json": JSON.stringify({
                    v: 2,
                    selectedId: "ui-damaged",
                    workspaces: [{ id: "ui-damaged", name: "Damaged chat", colour: 3, settings }]
                }),
                "workspaces/ui-damaged.jsonl": original
            })
        });

        it("at start, sets aside a corrupt line and a truncated last line of a chat, loads the rest, and tells the user where the original is", async () => {
            const { page } = kvault.app();
            const directory = path.join(kvault.server().dataDir, "workspaces");
            const journal = path.join(directory, "ui-damaged.jsonl");
            expect(await onScreen(page)).toEqual([
                { role: "user", text: "First question" },
                { role: "assistant", text: "First answer" },
                { role: "user", text: "Second question" },
                { role: "assistant", text: "Second answer" }
            ]);
            const notice = page.getByRole("alert", { name: "Damaged chat records" });
            await notice.waitFor();
            const text = await notice.textContent();
            expect(text).toContain("Everything else was loaded.");
            expect(text).toContain("“Damaged chat”, line 3 of its chat file: a damaged record (not JSON)");
            expect(text).toContain(
                "“Damaged chat”, line 6 of its chat file: the last message was cut short (Kvault stopped while saving it); 40 bytes set aside."
            );
            const copies = await notice.locator("li").evaluateAll((items) => items.map((item) => item.getAttribute("data-copy")));
            expect(new Set(copies).size).toBe(1);
            const copy = copies[0]!;
            expect(text).toContain(`The file as it was is kept at ${copy}.`);
            expect(text!.split("kept at")).toHaveLength(2); // one copy, named once
            expect(path.dirname(copy)).toBe(directory);
            expect(fs.readFileSync(copy, "utf8"), "the original, byte for byte").toBe(original);
            expect(fs.readFileSync(journal, "utf8").trim().split("\n"), "the chat file rewritten with the four good records").toHaveLength(
                4
            );
            expect((await storedState(page)).problems.map((problem) => [problem.line, problem.kind])).toEqual([
                [3, "corrupt"],
                [6, "truncated"]
            ]);
            kvault.screenshots.push(await kvault.app().screenshot("store-damaged-chat-notice"));

            // The chat goes on: a new turn appends to the repaired file.
            await sendMessage(page, "And now?");
            await expect.poll(async () => (await storedWorkspaces(page))[0]!.messages.length, { timeout: 120_000, interval: 250 }).toBe(6);
            await notice.getByRole("button", { name: "Dismiss the damaged records notice" }).click();
            await expect.poll(() => notice.count()).toBe(0);
            expect(kvault.app().problems).toEqual([]);
        });
    });
});

/** The workspace list as the server left it on disk. */
async function storedWorkspacesFromDisk(dataDir: string): Promise<{ id: string; name: string }[]> {
    const list = JSON.parse(await fs.promises.readFile(path.join(dataDir, "workspaces", "index.json"), "utf8")) as {
        workspaces: { id: string; name: string }[];
    };
    return list.workspaces;
}
