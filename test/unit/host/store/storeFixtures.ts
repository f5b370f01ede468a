import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { StoredMessage, WorkspaceMeta } from "../../../../contract/workspaces.js";
import { defaultWorkspaceSettings } from "../../../../contract/workspaces.js";
import { storePaths, type StorePaths } from "../../../../host/store/storePaths.js";
import { WorkspaceStore } from "../../../../host/store/WorkspaceStore.js";

/** A fresh data directory under the system's temporary folder; the caller removes it. */
export function tempDataDir(): string {
    return fs.mkdtempSync(path.join(os.tmpdir(), "kvault-store-"));
}

/** The clock tests give the store: copies are named after it. */
export const fixedNow = (): Date => new Date("2026-01-05T05:04:49.123Z");

export const workspaceA: WorkspaceMeta = {
    id: "ui-aaaa",
    name: "Research",
    colour: 2,
    settings: { ...defaultWorkspaceSettings, systemPrompt: "Be brief." }
};
export const workspaceB: WorkspaceMeta = { id: "ui-bbbb", name: "Drafts", colour: 5, settings: defaultWorkspaceSettings };

export const usage = { promptTokens: 12, cachedPromptTokens: 4, evaluatedPromptTokens: 8, completionTokens: 3 } as const;

export function userMessage(id: string, content = `question ${id}`): StoredMessage {
    return { id, role: "user", content };
}

export function answer(id: string, content = `answer ${id}`): StoredMessage {
    return { id, role: "assistant", content, finish: "stop", usage };
}

/** The names in `directory`, sorted. */
export function listNames(directory: string): string[] {
    return fs.readdirSync(directory).sort();
}

export interface TempStore {
    /** This test's data directory, fresh before it and removed after it. */
    dataDir: string;
    paths: StorePaths;
    /** What the store logged during this test. */
    logged: string[];
    /** Opens the store on this test's directory, with the fixed clock. */
    open(): Promise<WorkspaceStore>;
}

/** A store's data directory per test of the calling file (its beforeEach and afterEach). */
export function useTempStore(): TempStore {
    const temp: TempStore = {
        dataDir: "",
        paths: storePaths(""),
        logged: [],
        open: () => WorkspaceStore.open(temp.dataDir, { now: fixedNow, log: (line) => temp.logged.push(line) })
    };
    beforeEach(() => {
        temp.dataDir = tempDataDir();
        temp.paths = storePaths(temp.dataDir);
        temp.logged = [];
    });
    afterEach(() => {
        fs.rmSync(temp.dataDir, { recursive: true, force: true });
    });
    return temp;
}
