import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { chatExportFormat, type StoredMessage } from "../../../../contract/workspaces.js";
import { answer, useTempStore, userMessage, workspaceA, workspaceB } from "./storeFixtures.js";

const temp = useTempStore();

const at = (message: StoredMessage, time: number, parent?: string | null): StoredMessage => ({
    ...message,
    at: time,
    ...(parent === undefined ? {} : { parent })
});

describe("WorkspaceStore branches (format 3)", () => {
    it("keeps a regenerated answer, an edit, a branch switch and a deleted message across a reopen", async () => {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.appendMessage(workspaceA.id, at(userMessage("m-1"), 1));
        await store.appendMessage(workspaceA.id, at(answer("m-2"), 2, "m-1"));
        await store.appendMessage(workspaceA.id, at(answer("m-3"), 3, "m-1")); // Regenerate
        await store.appendMessage(workspaceA.id, at(userMessage("m-4"), 4, "m-3"));
        await store.appendMessage(workspaceA.id, at(userMessage("m-5", "edited"), 5, "m-3")); // edit of m-4
        expect(await store.selectBranch(workspaceA.id, "m-2")).toEqual({ selected: true });
        expect(await store.selectBranch(workspaceA.id, "m-9")).toEqual({ selected: false });
        expect(await store.deleteMessage(workspaceA.id, "m-4")).toEqual({ deleted: true });
        expect(await store.deleteMessage(workspaceA.id, "m-4")).toEqual({ deleted: false });
        const before = (await store.load()).workspaces[0]!;
        expect(before.messages.map((message) => message.id)).toEqual(["m-1", "m-2"]);
        expect(before.branches!.map((message) => message.id).sort()).toEqual(["m-3", "m-5"]);
        await store.close();

        const reopened = await temp.open();
        expect((await reopened.load()).workspaces[0]).toEqual(before);
        await reopened.selectBranch(workspaceA.id, "m-3");
        expect((await reopened.load()).workspaces[0]!.messages.map((message) => message.id)).toEqual(["m-1", "m-3", "m-5"]);
        await reopened.clearChat(workspaceA.id);
        const cleared = (await reopened.load()).workspaces[0]!;
        expect([cleared.messages, cleared.branches]).toEqual([[], undefined]);
        await reopened.close();
    });

    it("opens a format-2 data directory with nothing lost: the list moves to format 3, the chat files are read as they are", async () => {
        fs.mkdirSync(temp.paths.directory, { recursive: true });
        const list = { v: 2, selectedId: workspaceA.id, workspaces: [workspaceA] };
        fs.writeFileSync(temp.paths.metadata, JSON.stringify(list));
        const chat = [
            '{"v":2,"op":"message","id":"m-1","role":"user","content":"Hi"}',
            '{"v":2,"op":"message","id":"m-2","role":"assistant","content":"Hello.","finish":"stop"}',
            '{"v":2,"op":"drop","id":"m-2"}',
            '{"v":2,"op":"message","id":"m-3","role":"assistant","content":"Hello again.","finish":"stop"}',
            ""
        ].join("\n");
        fs.writeFileSync(temp.paths.journal(workspaceA.id), chat);
        const store = await temp.open();
        expect(await store.load()).toEqual({
            workspaces: [
                {
                    ...workspaceA,
                    messages: [
                        { id: "m-1", role: "user", content: "Hi" },
                        { id: "m-3", role: "assistant", content: "Hello again.", finish: "stop" }
                    ]
                }
            ],
            selectedId: workspaceA.id,
            problems: []
        });
        expect(JSON.parse(fs.readFileSync(temp.paths.metadata, "utf8"))).toEqual({ ...list, v: 3 });
        expect(fs.readFileSync(temp.paths.journal(workspaceA.id), "utf8")).toBe(chat);
        expect(temp.logged.join("\n")).toMatch(/from format 2 to 3/);
        await store.close();
    });

    it("duplicates a workspace with its branches, and imports an exported chat; a bad file is a typed error and changes nothing", async () => {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.appendMessage(workspaceA.id, at(userMessage("m-1"), 1));
        await store.appendMessage(workspaceA.id, at(answer("m-2"), 2));
        await store.appendMessage(workspaceA.id, at(answer("m-3"), 3, "m-1"));
        const copy = await store.duplicateWorkspace(workspaceA.id, "ui-copy", "Research (copy)");
        const original = (await store.load()).workspaces[0]!;
        expect(copy).toEqual({ ...original, id: "ui-copy", name: "Research (copy)" });

        const exported = JSON.stringify({
            ...chatExportFormat,
            exportedAt: "2026-01-05T05:04:49.123Z",
            workspace: { name: workspaceB.name, colour: workspaceB.colour, settings: { ...workspaceB.settings, topK: 40, stop: ["END"] } },
            messages: original.messages,
            branches: original.branches
        });
        const imported = await store.importChat(exported, "ui-imported");
        expect(imported).toMatchObject({ id: "ui-imported", name: "Drafts", settings: { topK: 40, stop: ["END"] } });
        expect(imported.messages).toEqual(original.messages);

        const bad = JSON.parse(exported) as { messages: { content: unknown }[] };
        bad.messages[1]!.content = 42;
        await expect(store.importChat(JSON.stringify(bad), "ui-bad")).rejects.toMatchObject({
            code: "chat_import_invalid",
            message: expect.stringMatching(/messages\[1\]: content is 42, not a string\. Choose a file that Export JSON wrote/)
        });
        await expect(store.importChat("{not json", "ui-bad")).rejects.toMatchObject({ code: "chat_import_invalid" });
        await expect(store.importChat('{"format":"other"}', "ui-bad")).rejects.toThrow(/format is "other", not "kvault-chat"/);
        await expect(store.importChat(exported, "ui-imported")).rejects.toThrow(/already/);
        await store.close();

        const reopened = await temp.open();
        const ids = (await reopened.load()).workspaces.map((workspace) => workspace.id);
        expect(ids).toEqual([workspaceA.id, "ui-copy", "ui-imported"]);
        expect(fs.existsSync(temp.paths.journal("ui-bad"))).toBe(false);
        expect((await reopened.load()).workspaces[2]).toEqual(imported);
        await reopened.close();
    });
});
