import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultWorkspaceSettings } from "../../../../contract/workspaces.js";
import { detectStoreVersion } from "../../../../host/store/migrations.js";
import { readV1Workspaces } from "../../../../host/store/readV1Workspaces.js";
import { listNames, usage, useTempStore } from "./storeFixtures.js";

// Format 1 as the renderer wrote it to localStorage["kvault.workspaces"] (zustand persist, version 1),
// with ids as renderer/util/newId.ts makes them.
const first = "ui-3f9c2a7be0d14c5a9e8b7c6d5e4f3a21";
const second = "ui-a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5";
const v1Document = JSON.stringify({
    state: {
        workspaces: [
            {
                id: first,
                name: "Workspace 1",
                colour: 0,
                settings: { systemPrompt: "Answer in French.", temperature: 0.2, maxTokens: 64 },
                messages: [
                    { id: "m-0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a", role: "user", content: "Bonjour ?" },
                    { id: "m-1e2d3c4b5a69788796a5b4c3d2e1f0a9", role: "assistant", content: "Bonjour !", finish: "stop", usage },
                    { id: "m-2f3e4d5c6b7a8998a7b6c5d4e3f2a1b0", role: "user", content: "Et puis ?" },
                    { id: "m-3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d", role: "assistant", content: "Et puis rien", finish: "stopped" }
                ]
            },
            { id: second, name: "Workspace 2", colour: 1, settings: { systemPrompt: "", temperature: 0.7, maxTokens: 256 }, messages: [] }
        ],
        selectedId: second
    },
    version: 1
});

const temp = useTempStore();

describe("migration from format 1 (the renderer's localStorage document) to format 2", () => {
    it("splits the document into the workspace list and one chat file per workspace, switches the version, and keeps the old file", async () => {
        fs.writeFileSync(temp.paths.v1Document, v1Document);
        expect(await detectStoreVersion(temp.paths)).toBe(1);
        const store = await temp.open();
        const loaded = await store.load();
        await store.close();

        const original = (JSON.parse(v1Document) as { state: { workspaces: unknown[] } }).state.workspaces;
        expect(loaded).toEqual({ workspaces: original, selectedId: second, problems: [] });
        expect(await detectStoreVersion(temp.paths)).toBe(3);
        expect(listNames(temp.dataDir)).toEqual(["workspaces", "workspaces.v1-backup-2026-01-05T05-04-49-123Z.json"]);
        expect(fs.readFileSync(`${temp.dataDir}/workspaces.v1-backup-2026-01-05T05-04-49-123Z.json`, "utf8")).toBe(v1Document);
        expect(listNames(temp.paths.directory)).toEqual(["index.json", `${first}.jsonl`, `${second}.jsonl`]);
        expect(fs.readFileSync(temp.paths.journal(second), "utf8")).toBe("");
        expect(fs.readFileSync(temp.paths.journal(first), "utf8").trim().split("\n")).toHaveLength(4);
        expect(temp.logged.some((line) => /Moved 2 workspace\(s\)/.test(line))).toBe(true);

        // Migrated once: the next start reads format 2 and finds the same.
        const reopened = await temp.open();
        expect(await reopened.load()).toEqual(loaded);
        await reopened.close();
    });

    it("recovers from a crash midway: chat files written but not the list, so format 1 is still in charge and the migration runs again over the same files", async () => {
        fs.writeFileSync(temp.paths.v1Document, v1Document);
        fs.mkdirSync(temp.paths.directory);
        fs.writeFileSync(
            temp.paths.journal(first),
            '{"v":2,"op":"message","id":"m-0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a","role":"user","content":"Bonj'
        ); // cut short
        const store = await temp.open();
        const { workspaces, problems } = await store.load();
        await store.close();
        expect(problems).toEqual([]);
        expect(workspaces.map((workspace) => [workspace.id, workspace.messages.length])).toEqual([
            [first, 4],
            [second, 0]
        ]);
    });

    it("recovers from a crash after the switch: the list is in format 2, so the old document is only set aside", async () => {
        fs.writeFileSync(temp.paths.v1Document, v1Document);
        await (await temp.open()).close();
        const [backup] = listNames(temp.dataDir).filter((name) => name.startsWith("workspaces.v1-backup"));
        fs.renameSync(`${temp.dataDir}/${backup}`, temp.paths.v1Document); // as if the rename had not happened
        fs.appendFileSync(temp.paths.journal(first), '{"v":2,"op":"clear"}\n'); // a change made in format 2 since
        const store = await temp.open();
        expect((await store.load()).workspaces[0]!.messages).toEqual([]);
        await store.close();
        expect(fs.existsSync(temp.paths.v1Document)).toBe(false);
    });

    it("carries over what the renderer would have read, and lists what it would have dropped, kept in the backup", async () => {
        fs.writeFileSync(
            temp.paths.v1Document,
            JSON.stringify({
                version: 1,
                state: {
                    selectedId: "gone",
                    workspaces: [
                        {
                            id: "../../etc",
                            name: "  Kept  ",
                            colour: 2,
                            settings: { temperature: 9, maxTokens: 12, systemPrompt: 3 },
                            messages: [
                                { id: "m", role: "system", content: "x" },
                                { id: "m2", role: "user", content: "y", finish: "exploded" },
                                { id: "m2", role: "assistant", content: "z" }
                            ]
                        },
                        { id: "ok", name: "Duplicate id" },
                        { id: "ok", name: "Duplicate id again" },
                        { name: 7 },
                        "junk"
                    ]
                }
            })
        );
        const store = await temp.open();
        const { workspaces, selectedId, problems } = await store.load();
        await store.close();
        expect(
            workspaces.map(({ id, name, settings, messages }) => ({
                id,
                name,
                settings,
                messages: messages.map((message) => [message.id, message.role, message.content])
            }))
        ).toEqual([
            {
                id: expect.stringMatching(/^ui-[0-9a-f]{32}$/),
                name: "Kept",
                settings: { systemPrompt: "", temperature: defaultWorkspaceSettings.temperature, maxTokens: 12 },
                messages: [
                    ["m2", "user", "y"],
                    [expect.stringMatching(/^m-[0-9a-f]{32}$/), "assistant", "z"]
                ]
            },
            { id: "ok", name: "Duplicate id", settings: defaultWorkspaceSettings, messages: [] },
            { id: expect.stringMatching(/^ui-[0-9a-f]{32}$/), name: "Duplicate id again", settings: defaultWorkspaceSettings, messages: [] }
        ]);
        expect(selectedId).toBe(workspaces[0]!.id);
        const backup = `${temp.dataDir}/workspaces.v1-backup-2026-01-05T05-04-49-123Z.json`;
        expect(problems.map(({ workspaceName, reason, copy, line, kind }) => [workspaceName, reason, copy, line, kind])).toEqual([
            ["Kept", 'workspaces[0].messages[0]: role "system" is not "user" or "assistant"', backup, null, "corrupt"],
            [null, "workspaces[3]: not a workspace with a name", backup, null, "corrupt"],
            [null, "workspaces[4]: not a workspace with a name", backup, null, "corrupt"]
        ]);
    });

    it("gives the same new ids on every read of a document, so a migration run twice writes the same files", () => {
        const document = JSON.stringify({
            version: 1,
            state: { workspaces: [{ id: "Not An Id", name: "A", messages: [{ id: "", role: "user", content: "x" }] }] }
        });
        expect(readV1Workspaces(document)).toEqual(readV1Workspaces(document));
    });

    it.each([
        ["not JSON", "{", "not JSON"],
        ["another version", JSON.stringify({ version: 2, state: { workspaces: [] } }), "version 2, not 1"],
        ["no state", JSON.stringify({ version: 1 }), "not a saved workspace list"]
    ])("takes nothing from a document that is %s, and says so", (_, document, reason) => {
        expect(readV1Workspaces(document)).toEqual({
            workspaces: [],
            selectedId: null,
            omissions: [expect.objectContaining({ path: "(the document)", reason: expect.stringContaining(reason) })]
        });
    });
});

describe("importWorkspaces: the renderer hands its localStorage document over once", () => {
    it("takes the document into an empty store, keeping a copy of it beside the chats", async () => {
        const store = await temp.open();
        const imported = await store.importV1(v1Document);
        expect(imported.numImported).toBe(2);
        expect(imported.workspaces.map((workspace) => [workspace.id, workspace.messages.length])).toEqual([
            [first, 4],
            [second, 0]
        ]);
        expect(imported.selectedId).toBe(second);
        expect(fs.readFileSync(`${temp.paths.directory}/imported-v1-2026-01-05T05-04-49-123Z.json`, "utf8")).toBe(v1Document);
        await store.close();
        const reopened = await temp.open();
        expect((await reopened.load()).workspaces).toEqual(imported.workspaces);
        await reopened.close();
    });

    it("takes nothing into a store that already has workspaces", async () => {
        const store = await temp.open();
        await store.importV1(v1Document);
        await store.removeWorkspace(second);
        const again = await store.importV1(JSON.stringify({ version: 1, state: { workspaces: [{ id: "ui-new", name: "New" }] } }));
        expect(again.numImported).toBe(0);
        expect(again.workspaces.map((workspace) => workspace.id)).toEqual([first]);
        await store.close();
    });
});
