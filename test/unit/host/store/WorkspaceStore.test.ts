import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { encodeJournalRecord } from "../../../../host/store/journalRecords.js";
import { answer, listNames, useTempStore, userMessage, workspaceA, workspaceB } from "./storeFixtures.js";

const temp = useTempStore();

describe("WorkspaceStore", () => {
    it("starts empty in a new data directory, making only its folder", async () => {
        const store = await temp.open();
        expect(await store.load()).toEqual({ workspaces: [], selectedId: null, problems: [] });
        expect(listNames(temp.dataDir)).toEqual(["workspaces"]);
        expect(listNames(temp.paths.directory)).toEqual([]);
        await store.close();
    });

    it("keeps every change on disk: a reopened store reads back the same workspaces, chats and selection", async () => {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.saveWorkspace(workspaceB);
        await store.selectWorkspace(workspaceB.id);
        await store.appendMessage(workspaceA.id, userMessage("m-1"));
        await store.appendMessage(workspaceA.id, answer("m-2"));
        expect(await store.dropLastAnswer(workspaceA.id, "m-2")).toEqual({ dropped: true });
        expect(await store.dropLastAnswer(workspaceA.id, "m-1")).toEqual({ dropped: false }); // not an answer: Regenerate never drops the question
        await store.appendMessage(workspaceA.id, answer("m-3"));
        await store.appendMessage(workspaceB.id, userMessage("m-4"));
        await store.clearChat(workspaceB.id);
        await store.appendMessage(workspaceB.id, userMessage("m-5"));
        await store.saveWorkspace({ ...workspaceA, name: "Research, renamed", colour: 3 });
        const before = await store.load();
        await store.close();

        expect(before.workspaces.map((workspace) => [workspace.name, workspace.messages.map((message) => message.id)])).toEqual([
            ["Research, renamed", ["m-1", "m-3"]],
            ["Drafts", ["m-5"]]
        ]);
        expect(before.selectedId).toBe(workspaceB.id);
        const reopened = await temp.open();
        expect(await reopened.load()).toEqual(before);
        await reopened.close();
    });

    it("writes the workspace list as one JSON document and each chat as JSON lines (the format docs/app.md documents)", async () => {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.appendMessage(workspaceA.id, userMessage("m-1", "Hi"));
        await store.appendMessage(workspaceA.id, answer("m-2", "Hello."));
        await store.dropLastAnswer(workspaceA.id, "m-2");
        await store.close();
        expect(JSON.parse(fs.readFileSync(temp.paths.metadata, "utf8"))).toEqual({ v: 3, selectedId: null, workspaces: [workspaceA] });
        expect(fs.readFileSync(temp.paths.journal(workspaceA.id), "utf8").split("\n")).toEqual([
            '{"v":3,"op":"message","id":"m-1","role":"user","content":"Hi"}',
            '{"v":3,"op":"message","id":"m-2","role":"assistant","content":"Hello.","finish":"stop","usage":{"promptTokens":12,"cachedPromptTokens":4,"evaluatedPromptTokens":8,"completionTokens":3}}',
            '{"v":3,"op":"drop","id":"m-2"}',
            ""
        ]);
        expect(listNames(temp.paths.directory)).toEqual(["index.json", "ui-aaaa.jsonl"]);
    });

    it("removes a workspace with its chat file and moves the selection to its neighbour", async () => {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.saveWorkspace(workspaceB);
        await store.selectWorkspace(workspaceA.id);
        await store.appendMessage(workspaceA.id, userMessage("m-1"));
        await store.removeWorkspace(workspaceA.id);
        await store.removeWorkspace(workspaceA.id); // again: nothing to do
        expect(await store.load()).toMatchObject({ selectedId: workspaceB.id, workspaces: [{ id: workspaceB.id }] });
        expect(fs.existsSync(temp.paths.journal(workspaceA.id))).toBe(false);
        await store.close();
    });

    it("refuses changes to a workspace it does not have, and a second message with an id already in the chat; a retried append does nothing", async () => {
        const store = await temp.open();
        await expect(store.appendMessage("ui-gone", userMessage("m-1"))).rejects.toMatchObject({
            code: "workspace_not_found",
            message: expect.stringMatching(/ui-gone/)
        });
        await expect(store.selectWorkspace("ui-gone")).rejects.toMatchObject({ code: "workspace_not_found" });
        await store.saveWorkspace(workspaceA);
        await store.appendMessage(workspaceA.id, userMessage("m-1"));
        await store.appendMessage(workspaceA.id, userMessage("m-1"));
        await store.appendMessage(workspaceA.id, answer("m-2"));
        await expect(store.appendMessage(workspaceA.id, userMessage("m-1", "other text"))).rejects.toMatchObject({
            code: "invalid_request"
        });
        expect((await store.load()).workspaces[0]!.messages.map((message) => message.id)).toEqual(["m-1", "m-2"]);
        await store.close();
    });

    it("reports a change it cannot write as store_write_failed, changing nothing in memory or on disk", async () => {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.appendMessage(workspaceA.id, userMessage("m-1"));
        // A folder where the chat file of B would go, and where the list's rename lands: both writes fail, even for root.
        fs.mkdirSync(temp.paths.journal(workspaceB.id));
        await store.saveWorkspace(workspaceB);
        await expect(store.appendMessage(workspaceB.id, userMessage("m-2"))).rejects.toMatchObject({
            code: "store_write_failed",
            message: expect.stringMatching(/ui-bbbb\.jsonl.*not saved/)
        });
        const listBefore = fs.readFileSync(temp.paths.metadata, "utf8");
        fs.rmSync(temp.paths.metadata);
        fs.mkdirSync(temp.paths.metadata);
        await expect(store.saveWorkspace({ ...workspaceA, name: "Renamed" })).rejects.toMatchObject({
            code: "store_write_failed",
            message: expect.stringMatching(/workspace list/)
        });
        const state = await store.load();
        expect(state.workspaces.map((workspace) => [workspace.name, workspace.messages.length])).toEqual([
            ["Research", 1],
            ["Drafts", 0]
        ]);
        fs.rmdirSync(temp.paths.metadata);
        fs.writeFileSync(temp.paths.metadata, listBefore);
        expect(listNames(temp.paths.directory).filter((name) => name.endsWith(".tmp"))).toEqual([]);
        await store.close();
    });

    it("refuses calls once closed, after finishing the ones already asked for", async () => {
        const store = await temp.open();
        const saving = store.saveWorkspace(workspaceA);
        await store.close();
        await saving;
        await expect(store.saveWorkspace(workspaceB)).rejects.toMatchObject({
            code: "store_write_failed",
            message: expect.stringMatching(/shutting down/)
        });
        expect(JSON.parse(fs.readFileSync(temp.paths.metadata, "utf8")).workspaces).toHaveLength(1);
    });
});

describe("WorkspaceStore at start: damaged files are detected, the rest loaded, the original kept", () => {
    async function withChat(lines: string): Promise<void> {
        const store = await temp.open();
        await store.saveWorkspace(workspaceA);
        await store.saveWorkspace(workspaceB);
        await store.appendMessage(workspaceB.id, userMessage("m-b"));
        await store.close();
        fs.writeFileSync(temp.paths.journal(workspaceA.id), lines);
    }

    it("sets aside a corrupt line in the middle and a truncated last line, keeps a copy, and rewrites the chat cleanly", async () => {
        const good = [userMessage("m-1"), answer("m-2"), userMessage("m-3")].map((message) =>
            encodeJournalRecord({ op: "message", message })
        );
        const corrupt = '{"v":2,"op":"message","id":"m-x","role":"user","content":17}\n';
        const cut = encodeJournalRecord({ op: "message", message: answer("m-4") }).slice(0, 30);
        const original = good[0]! + corrupt + good[1]! + good[2]! + cut;
        await withChat(original);

        const store = await temp.open();
        const { workspaces, problems } = await store.load();
        expect(workspaces.find((workspace) => workspace.id === workspaceA.id)!.messages.map((message) => message.id)).toEqual([
            "m-1",
            "m-2",
            "m-3"
        ]);
        expect(workspaces.find((workspace) => workspace.id === workspaceB.id)!.messages.map((message) => message.id)).toEqual(["m-b"]);
        const copy = `${temp.paths.journal(workspaceA.id)}.corrupt-2026-01-05T05-04-49-123Z`;
        expect(problems).toEqual([
            {
                workspace: workspaceA.id,
                workspaceName: "Research",
                file: temp.paths.journal(workspaceA.id),
                line: 2,
                kind: "corrupt",
                bytes: corrupt.length - 1,
                reason: "content is 17, not a string",
                copy
            },
            {
                workspace: workspaceA.id,
                workspaceName: "Research",
                file: temp.paths.journal(workspaceA.id),
                line: 5,
                kind: "truncated",
                bytes: 30,
                reason: "not JSON",
                copy
            }
        ]);
        expect(fs.readFileSync(copy, "utf8")).toBe(original);
        expect(fs.readFileSync(temp.paths.journal(workspaceA.id), "utf8")).toBe(good.join(""));
        expect(temp.logged.filter((line) => line.startsWith("Set aside"))).toHaveLength(2);

        // The repaired file takes appends, and the next start finds nothing wrong.
        await store.appendMessage(workspaceA.id, answer("m-5"));
        await store.close();
        const again = await temp.open();
        expect((await again.load()).problems).toEqual([]);
        expect((await again.load()).workspaces[0]!.messages.map((message) => message.id)).toEqual(["m-1", "m-2", "m-3", "m-5"]);
        await again.close();
    });

    it("names a second copy differently when the clock gives the same time", async () => {
        await withChat("garbage\n");
        await (await temp.open()).close();
        fs.appendFileSync(temp.paths.journal(workspaceA.id), "more garbage\n");
        const store = await temp.open();
        expect((await store.load()).problems.map((problem) => path.basename(problem.copy))).toEqual([
            "ui-aaaa.jsonl.corrupt-2026-01-05T05-04-49-123Z-2"
        ]);
        await store.close();
    });

    it("sets aside a damaged workspace list, keeping a copy, and brings every chat back as a recovered workspace", async () => {
        await withChat(encodeJournalRecord({ op: "message", message: userMessage("m-1") }));
        const damaged = '{"v":2,"selectedId":"ui-aaaa","workspa';
        fs.writeFileSync(temp.paths.metadata, damaged);
        const store = await temp.open();
        const { workspaces, problems, selectedId } = await store.load();
        expect(workspaces.map((workspace) => [workspace.id, workspace.name, workspace.messages.length])).toEqual([
            ["ui-aaaa", "Recovered chat 1", 1],
            ["ui-bbbb", "Recovered chat 2", 1]
        ]);
        expect(selectedId).toBe("ui-aaaa");
        expect(problems).toEqual([
            expect.objectContaining({
                workspace: null,
                file: temp.paths.metadata,
                line: null,
                kind: "corrupt",
                bytes: damaged.length,
                reason: "the workspace list is not JSON"
            })
        ]);
        expect(fs.readFileSync(problems[0]!.copy, "utf8")).toBe(damaged);
        await store.close();
        expect((await (await temp.open()).load()).workspaces.map((workspace) => workspace.name)).toEqual([
            "Recovered chat 1",
            "Recovered chat 2"
        ]);
    });

    it("sets aside one bad entry of the workspace list and recovers its chat", async () => {
        await withChat(encodeJournalRecord({ op: "message", message: userMessage("m-1") }));
        const list = JSON.parse(fs.readFileSync(temp.paths.metadata, "utf8")) as { workspaces: { name: unknown }[] };
        list.workspaces[0]!.name = 42;
        fs.writeFileSync(temp.paths.metadata, JSON.stringify(list));
        const store = await temp.open();
        const { workspaces, problems } = await store.load();
        expect(workspaces.map((workspace) => workspace.name)).toEqual(["Drafts", "Recovered chat"]);
        expect(problems).toEqual([expect.objectContaining({ workspace: "ui-aaaa", reason: expect.stringMatching(/name 42/) })]);
        await store.close();
    });

    it("removes temporary files a crash left, and ignores files that are not chats", async () => {
        await withChat("");
        fs.writeFileSync(path.join(temp.paths.directory, ".index.json.123.abcdef.tmp"), "half");
        fs.writeFileSync(path.join(temp.paths.directory, "notes.txt"), "mine");
        fs.writeFileSync(path.join(temp.paths.directory, "Bad Name.jsonl"), "x");
        const store = await temp.open();
        expect((await store.load()).workspaces.map((workspace) => workspace.id)).toEqual([workspaceA.id, workspaceB.id]);
        expect(listNames(temp.paths.directory)).toEqual(["Bad Name.jsonl", "index.json", "notes.txt", "ui-aaaa.jsonl", "ui-bbbb.jsonl"]);
        await store.close();
    });

    it("refuses a store from a newer Kvault without touching it", async () => {
        fs.mkdirSync(temp.paths.directory, { recursive: true });
        fs.writeFileSync(temp.paths.metadata, '{"v":4,"anything":"new"}');
        fs.writeFileSync(temp.paths.journal("ui-x"), '{"v":4}\n');
        await expect(temp.open()).rejects.toMatchObject({
            code: "store_version_unsupported",
            message: expect.stringMatching(/format 4; this Kvault reads formats up to 3/)
        });
        expect(listNames(temp.paths.directory)).toEqual(["index.json", "ui-x.jsonl"]);
        expect(fs.readFileSync(temp.paths.metadata, "utf8")).toBe('{"v":4,"anything":"new"}');
    });
});
