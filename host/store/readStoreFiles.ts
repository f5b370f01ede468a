import fs from "node:fs/promises";
import path from "node:path";
import type { BranchedChat } from "../../contract/chatBranches.js";
import type { StoreProblem, StoredWorkspace, WorkspaceMeta } from "../../contract/workspaces.js";
import { defaultWorkspaceSettings, isStoreId } from "../../contract/workspaces.js";
import { ChatJournal } from "./ChatJournal.js";
import { STORE_FORMAT_VERSION } from "./journalRecords.js";
import { encodeMetadata, metaOf, parseMetadata } from "./metadataFile.js";
import { preserveCopy } from "./preserveCopy.js";
import { readJournal } from "./readJournal.js";
import { journalWorkspace, type StorePaths } from "./storePaths.js";
import { writeFileAtomic } from "./writeFileAtomic.js";

export interface StoreContents {
    readonly workspaces: StoredWorkspace[];
    readonly selectedId: string | null;
    readonly problems: StoreProblem[];
}

/**
 * Reads a store in the current format and leaves it clean for appending. A damaged chat file is copied aside
 * (`<file>.corrupt-<time>`) and rewritten with what could be read; each line set aside becomes a
 * problem. A damaged workspace list is copied aside too, and every chat file it no longer names
 * comes back as "Recovered chat": a chat file is only ever deleted with its workspace.
 */
export async function readStoreFiles(paths: StorePaths, now: () => Date, log: (line: string) => void): Promise<StoreContents> {
    const problems: StoreProblem[] = [];
    const names = await fs.readdir(paths.directory);
    await removeStaleTemporaries(paths.directory, names);

    const metadata = await readMetadata(paths, now, problems);
    let rewriteMetadata = metadata.damaged;
    const workspaces: StoredWorkspace[] = [];
    for (const meta of metadata.workspaces) {
        workspaces.push({ ...meta, ...(await readChat(paths, meta, now, problems)) });
    }

    const listed = new Set(workspaces.map((workspace) => workspace.id));
    const orphans = names
        .map(journalWorkspace)
        .filter((id): id is string => id !== undefined && isStoreId(id) && !listed.has(id))
        .sort();
    for (const [index, id] of orphans.entries()) {
        const meta: WorkspaceMeta = {
            id,
            name: `Recovered chat${orphans.length > 1 ? ` ${index + 1}` : ""}`,
            colour: (workspaces.length + index) % 8,
            settings: defaultWorkspaceSettings
        };
        workspaces.push({ ...meta, ...(await readChat(paths, meta, now, problems)) });
        log(`The workspace list did not name ${paths.journal(id)}; its chat is back as "${meta.name}".`);
        rewriteMetadata = true;
    }

    const wanted = metadata.selectedId;
    const selectedId =
        typeof wanted === "string" && workspaces.some((workspace) => workspace.id === wanted) ? wanted : (workspaces[0]?.id ?? null);
    if (selectedId !== (wanted ?? null)) {
        rewriteMetadata = true;
    }
    if (rewriteMetadata) {
        await writeFileAtomic(paths.metadata, encodeMetadata({ selectedId, workspaces: workspaces.map(metaOf) }));
    }
    return { workspaces, selectedId, problems };
}

async function readMetadata(
    paths: StorePaths,
    now: () => Date,
    problems: StoreProblem[]
): Promise<{ workspaces: WorkspaceMeta[]; selectedId: unknown; damaged: boolean }> {
    let text: string;
    try {
        text = await fs.readFile(paths.metadata, "utf8");
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
            return { workspaces: [], selectedId: null, damaged: false };
        }
        throw error;
    }
    const parsed = parseMetadata(text);
    const problem = (reason: string, bytes: number, workspace: string | null, copy: string): StoreProblem => ({
        workspace,
        workspaceName: null,
        file: paths.metadata,
        line: null,
        kind: "corrupt",
        bytes,
        reason,
        copy
    });
    if (!parsed.ok || parsed.value.version !== STORE_FORMAT_VERSION) {
        const reason = parsed.ok ? `format ${parsed.value.version} where ${STORE_FORMAT_VERSION} belongs` : parsed.reason;
        problems.push(problem(`the workspace list is ${reason}`, Buffer.byteLength(text), null, await preserveCopy(paths.metadata, now())));
        return { workspaces: [], selectedId: null, damaged: true };
    }
    const workspaces: WorkspaceMeta[] = [];
    const bad: { raw: unknown; reason: string }[] = [];
    for (const { raw, read } of parsed.value.entries) {
        if (!read.ok) {
            bad.push({ raw, reason: read.reason });
        } else if (workspaces.some((workspace) => workspace.id === read.value.id)) {
            bad.push({ raw, reason: `id ${read.value.id} is listed twice` });
        } else {
            workspaces.push(read.value);
        }
    }
    if (bad.length > 0) {
        const copy = await preserveCopy(paths.metadata, now());
        for (const { raw, reason } of bad) {
            const id = typeof raw === "object" && raw !== null && "id" in raw && isStoreId(raw.id) ? raw.id : null;
            problems.push(problem(`a workspace in the list: ${reason}`, Buffer.byteLength(JSON.stringify(raw) ?? ""), id, copy));
        }
    }
    return { workspaces, selectedId: parsed.value.selectedId, damaged: bad.length > 0 };
}

/** A workspace's chat, its file repaired when needed; no file is an empty chat. */
async function readChat(paths: StorePaths, meta: WorkspaceMeta, now: () => Date, problems: StoreProblem[]): Promise<BranchedChat> {
    const file = paths.journal(meta.id);
    let bytes: Buffer;
    try {
        bytes = await fs.readFile(file);
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") {
            return { messages: [], branches: [] };
        }
        throw error;
    }
    const read = readJournal(bytes);
    if (read.issues.length > 0) {
        const copy = await preserveCopy(file, now());
        for (const issue of read.issues) {
            problems.push({
                workspace: meta.id,
                workspaceName: meta.name,
                file,
                line: issue.line,
                kind: issue.kind,
                bytes: issue.bytes,
                reason: issue.reason,
                copy
            });
        }
    }
    const chat: BranchedChat = { messages: read.messages, branches: read.branches };
    if (read.needsRewrite) {
        await new ChatJournal(file).rewrite(chat);
    }
    return chat;
}

/** writeFileAtomic's temporary files (`.<name>.<pid>.<random>.tmp`) that a crash left behind. */
async function removeStaleTemporaries(directory: string, names: readonly string[]): Promise<void> {
    for (const name of names) {
        if (/^\..+\.tmp$/.test(name)) {
            await fs.rm(path.join(directory, name), { force: true });
        }
    }
}
