import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { encodeJournalRecord } from "../../../host/store/journalRecords.js";

export interface SeededWorkspace {
    readonly id: string;
    readonly name: string;
    readonly colour: number;
    /** The chat, oldest first; ids are made from the workspace's id and the position. */
    readonly messages: readonly { readonly role: "user" | "assistant"; readonly content: string }[];
}

/**
 * A fresh data directory holding these workspaces and chats in the store's format (as
 * test/e2e/persistence.test.ts writes one), with the first selected: a test can show a chat
 * whose answer has exactly the text it needs. Greedy and 8 tokens long, should a test send more.
 * The caller removes the directory.
 */
export function seedChats(workspaces: readonly SeededWorkspace[]): string {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "kvault-e2e-seeded-"));
    const directory = path.join(dataDir, "workspaces");
    fs.mkdirSync(directory, { recursive: true });
    const settings = { systemPrompt: "", temperature: 0, maxTokens: 8 };
    fs.writeFileSync(
        path.join(directory, "index.json"),
        JSON.stringify({
            v: 2,
            selectedId: workspaces[0]?.id,
            workspaces: workspaces.map(({ id, name, colour }) => ({ id, name, colour, settings }))
        })
    );
    for (const workspace of workspaces) {
        const journal = workspace.messages
            .map(({ role, content }, index) =>
                encodeJournalRecord({
                    op: "message",
                    message: {
                        id: `m-${workspace.id}-${index}`,
                        role,
                        content,
                        ...(role === "assistant" ? { finish: "stop" as const } : {})
                    }
                })
            )
            .join("");
        fs.writeFileSync(path.join(directory, `${workspace.id}.jsonl`), journal);
    }
    return dataDir;
}
