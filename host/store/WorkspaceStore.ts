import fs from "node:fs/promises";
import path from "node:path";
import type { LoadedWorkspaces, StoredMessage, StoreProblem, StoredWorkspace, WorkspaceMeta } from "../../contract/workspaces.js";
import { workspaceLimits } from "../../contract/workspaces.js";
import { InvalidRequestError, KvaultError } from "../../engine/index.js";
import { chatBranches, type BranchedChat } from "../../contract/chatBranches.js";
import { ChatJournal } from "./ChatJournal.js";
import type { JournalRecord } from "./journalRecords.js";
import { encodeMetadata, metaOf } from "./metadataFile.js";
import { migrateStore, omissionProblems } from "./migrations.js";
import { readStoreFiles } from "./readStoreFiles.js";
import { readV1Workspaces } from "./readV1Workspaces.js";
import { readChatExport } from "./readChatExport.js";
import { ChatImportError, StoreLimitError, StoreOpenError, StoreWriteError, WorkspaceNotFoundError } from "./storeErrors.js";
import { fileStamp, storePaths, type StorePaths } from "./storePaths.js";
import { writeFileAtomic } from "./writeFileAtomic.js";
import { writeStoreFiles } from "./writeStoreFiles.js";

export interface WorkspaceStoreOptions {
    readonly log?: (line: string) => void;
    /** The clock for the names of kept copies; tests fix it. */
    readonly now?: () => Date;
}

/** What importWorkspaces answers: the store after the import, and how many workspaces it took. */
export interface ImportResult extends LoadedWorkspaces {
    /** 0 when the store already had workspaces: an import never mixes into existing ones. */
    readonly numImported: number;
}

/**
 * The workspaces and their chats, on disk under the data directory (storePaths), for the host's
 * RPC. Changes run one at a time in call order, and each is on disk before its promise resolves
 * and before memory changes: what `load` returns is what the next start reads. A change that
 * cannot be written rejects with StoreWriteError and changes nothing.
 */
export class WorkspaceStore {
    #workspaces: StoredWorkspace[];
    #selectedId: string | null;
    readonly #problems: StoreProblem[];
    #queue: Promise<unknown> = Promise.resolve();
    #closed = false;

    private constructor(
        private readonly paths: StorePaths,
        contents: { workspaces: StoredWorkspace[]; selectedId: string | null; problems: StoreProblem[] },
        private readonly now: () => Date
    ) {
        this.#workspaces = contents.workspaces;
        this.#selectedId = contents.selectedId;
        this.#problems = contents.problems;
    }

    /**
     * Opens (making, migrating and repairing as needed) the store in `dataDir`. Rejects with
     * StoreVersionError for a store from a newer Kvault (left untouched), StoreOpenError when the
     * folder cannot be used.
     */
    static async open(dataDir: string, options: WorkspaceStoreOptions = {}): Promise<WorkspaceStore> {
        const log = options.log ?? (() => undefined);
        const now = options.now ?? (() => new Date());
        const paths = storePaths(dataDir);
        try {
            await fs.mkdir(paths.directory, { recursive: true, mode: 0o700 });
        } catch (error) {
            throw new StoreOpenError(
                `Kvault cannot make its chats folder ${paths.directory}: ${(error as Error).message}. Check that the data folder exists and is yours.`,
                { cause: error }
            );
        }
        let migrated: StoreProblem[];
        let contents: Awaited<ReturnType<typeof readStoreFiles>>;
        try {
            migrated = await migrateStore({ paths, now, log });
            contents = await readStoreFiles(paths, now, log);
        } catch (error) {
            if (error instanceof KvaultError) {
                throw error;
            }
            throw new StoreOpenError(
                `Kvault cannot read its chats in ${paths.directory}: ${(error as Error).message}. Check the folder's permissions and the disk.`,
                { cause: error }
            );
        }
        const problems = [...migrated, ...contents.problems];
        for (const problem of problems) {
            log(
                `Set aside ${problem.bytes} bytes of ${problem.file}${problem.line === null ? "" : ` line ${problem.line}`} (${problem.kind}: ${problem.reason}); the original is kept as ${problem.copy}.`
            );
        }
        return new WorkspaceStore(paths, { ...contents, problems }, now);
    }

    /** Every workspace with its chat, the selection, and what was set aside at open. */
    load(): Promise<LoadedWorkspaces> {
        return this.#enqueue(async () => this.#snapshot());
    }

    /** A workspace's entry (not its chat), after every change queued before; undefined when none has that id. */
    findMeta(id: string): Promise<WorkspaceMeta | undefined> {
        return this.#enqueue(async () => {
            const workspace = this.#workspaces.find((item) => item.id === id);
            return workspace === undefined ? undefined : metaOf(workspace);
        });
    }

    /** Creates the workspace (at the end of the list) or changes its name, colour and settings. */
    saveWorkspace(meta: WorkspaceMeta): Promise<void> {
        return this.#enqueue(async () => {
            const index = this.#workspaces.findIndex((workspace) => workspace.id === meta.id);
            if (index === -1 && this.#workspaces.length >= workspaceLimits.maxWorkspaces) {
                throw new StoreLimitError(
                    `Kvault keeps at most ${workspaceLimits.maxWorkspaces.toLocaleString("en-US")} workspaces; delete one to make another.`
                );
            }
            const workspaces =
                index === -1
                    ? [...this.#workspaces, { ...meta, messages: [], branches: [] }]
                    : this.#workspaces.map((workspace, at) =>
                          at === index ? { ...meta, messages: workspace.messages, branches: workspace.branches } : workspace
                      );
            await this.#writeMetadata(workspaces, this.#selectedId);
            this.#workspaces = workspaces;
        });
    }

    /** Deletes the workspace and its chat file; the selection moves to its neighbour. Removing one that is not there does nothing. */
    removeWorkspace(id: string): Promise<void> {
        return this.#enqueue(async () => {
            const index = this.#workspaces.findIndex((workspace) => workspace.id === id);
            if (index === -1) {
                return;
            }
            const workspaces = this.#workspaces.filter((workspace) => workspace.id !== id);
            // The renderer's rule (workspaceStore.remove): the one that took its place, else the one before.
            const selectedId =
                this.#selectedId === id ? (workspaces[Math.min(index, workspaces.length - 1)]?.id ?? null) : this.#selectedId;
            // The list first: a crash before the chat file is gone brings it back as "Recovered chat", never loses one.
            await this.#writeMetadata(workspaces, selectedId);
            this.#workspaces = workspaces;
            this.#selectedId = selectedId;
            const journal = this.#journal(id);
            await journal.remove().catch((error: unknown) => {
                throw writeError(`The workspace was removed, but its chat file ${journal.filePath} could not be deleted`, error);
            });
        });
    }

    selectWorkspace(id: string): Promise<void> {
        return this.#enqueue(async () => {
            this.#find(id);
            if (this.#selectedId === id) {
                return;
            }
            await this.#writeMetadata(this.#workspaces, id);
            this.#selectedId = id;
        });
    }

    /**
     * Appends a message to the workspace's chat, after its parent (absent: after the chat's last
     * message), and shows the branch it ends. Sending the last message again (same id and content:
     * a retried call) does nothing; another message with an id already in the chat is refused.
     */
    appendMessage(workspace: string, message: StoredMessage): Promise<void> {
        return this.#enqueue(async () => {
            const current = this.#find(workspace);
            const last = current.messages.at(-1);
            if (last?.id === message.id && last.content === message.content && last.role === message.role) {
                return;
            }
            const chat = chatBranches(current);
            if (chat.has(message.id)) {
                throw new InvalidRequestError(
                    `The chat of ${workspace} already has a message ${message.id}; give each message its own id.`
                );
            }
            const stored = chat.append(message);
            await this.#append(workspace, { op: "message", message: stored });
            this.#setChat(workspace, chat.toChat());
        });
    }

    /** Shows the branch through `messageId` (an earlier answer, the message before an edit); `selected` is false when it is not in the chat. */
    selectBranch(workspace: string, messageId: string): Promise<{ selected: boolean }> {
        return this.#enqueue(async () => {
            const chat = chatBranches(this.#find(workspace));
            if (!chat.has(messageId)) {
                return { selected: false };
            }
            await this.#append(workspace, { op: "select", id: messageId });
            chat.select(messageId);
            this.#setChat(workspace, chat.toChat());
            return { selected: true };
        });
    }

    /** Deletes one message (the ones after it follow its parent); `deleted` is false when it is not in the chat. */
    deleteMessage(workspace: string, messageId: string): Promise<{ deleted: boolean }> {
        return this.#enqueue(async () => {
            const chat = chatBranches(this.#find(workspace));
            if (!chat.has(messageId)) {
                return { deleted: false };
            }
            await this.#append(workspace, { op: "delete", id: messageId });
            chat.delete(messageId);
            this.#setChat(workspace, chat.toChat());
            return { deleted: true };
        });
    }

    /** Format 2's Regenerate: deletes the last message if it is the answer `messageId`; `dropped` says whether it was. */
    dropLastAnswer(workspace: string, messageId: string): Promise<{ dropped: boolean }> {
        return this.#enqueue(async () => {
            const current = this.#find(workspace);
            const last = current.messages.at(-1);
            if (last?.id !== messageId || last.role !== "assistant") {
                return { dropped: false };
            }
            await this.#append(workspace, { op: "drop", id: messageId });
            const chat = chatBranches(current);
            chat.delete(messageId);
            this.#setChat(workspace, chat.toChat());
            return { dropped: true };
        });
    }

    /** Empties the chat, its branches too. */
    clearChat(workspace: string): Promise<void> {
        return this.#enqueue(async () => {
            const current = this.#find(workspace);
            if (current.messages.length === 0 && (current.branches ?? []).length === 0) {
                return;
            }
            await this.#append(workspace, { op: "clear" });
            this.#setChat(workspace, { messages: [], branches: [] });
        });
    }

    /**
     * Adds a whole workspace (a duplicate, an imported chat) at the end of the list: its chat file
     * first, then the list, so a crash midway leaves at most a chat file that comes back as
     * "Recovered chat". Refused when the id is taken or the list is full.
     */
    addWorkspace(workspace: StoredWorkspace): Promise<StoredWorkspace> {
        return this.#enqueue(async () => {
            if (this.#workspaces.some((item) => item.id === workspace.id)) {
                throw new InvalidRequestError(`There is a workspace ${workspace.id} already; give the new one an id of its own.`);
            }
            if (this.#workspaces.length >= workspaceLimits.maxWorkspaces) {
                throw new StoreLimitError(
                    `Kvault keeps at most ${workspaceLimits.maxWorkspaces.toLocaleString("en-US")} workspaces; delete one to make another.`
                );
            }
            const chat = chatBranches(workspace).toChat();
            const added: StoredWorkspace = { ...metaOf(workspace), ...chat };
            const journal = this.#journal(workspace.id);
            await journal.rewrite(chat).catch((error: unknown) => {
                throw writeError(`Could not save the chat to ${journal.filePath}`, error);
            });
            const workspaces = [...this.#workspaces, added];
            await this.#writeMetadata(workspaces, this.#selectedId);
            this.#workspaces = workspaces;
            return added;
        });
    }

    /** Adds the chat that Export JSON wrote as `document`, as workspace `id`; a bad file is a ChatImportError and changes nothing. */
    importChat(document: string, id: string): Promise<StoredWorkspace> {
        const read = readChatExport(document, id);
        if (!read.ok) {
            return Promise.reject(
                new ChatImportError(
                    `This file cannot be imported as a chat: ${read.reason}. Choose a file that Export JSON wrote; nothing was imported.`
                )
            );
        }
        return this.addWorkspace(read.value);
    }

    /** A copy of workspace `from` (settings, colour, chat and branches) as `to`, named `name`. */
    async duplicateWorkspace(from: string, to: string, name: string): Promise<StoredWorkspace> {
        const source = await this.#enqueue(async () => this.#find(from));
        return this.addWorkspace({ ...source, id: to, name });
    }

    /**
     * Takes over a format-1 document (the renderer's localStorage) when the store has no
     * workspaces yet; the document is kept as `imported-v1-<time>.json` beside the chats, and what
     * it held that cannot be stored comes back as problems.
     */
    importV1(document: string): Promise<ImportResult> {
        return this.#enqueue(async () => {
            if (this.#workspaces.length > 0) {
                return { ...this.#snapshot(), numImported: 0 };
            }
            const read = readV1Workspaces(document);
            if (read.workspaces.length === 0 && read.omissions.length === 0) {
                return { ...this.#snapshot(), numImported: 0 };
            }
            const copy = path.join(this.paths.directory, `imported-v1-${fileStamp(this.now())}.json`);
            try {
                await writeFileAtomic(copy, document);
                await writeStoreFiles(this.paths, read.workspaces, read.selectedId);
            } catch (error) {
                throw writeError("Could not take over the workspaces this window kept", error);
            }
            this.#workspaces = [...read.workspaces];
            this.#selectedId = read.selectedId;
            this.#problems.push(...omissionProblems(read.omissions, copy));
            return { ...this.#snapshot(), numImported: read.workspaces.length };
        });
    }

    /** Waits for the changes already asked for; later calls are refused. Idempotent. */
    async close(): Promise<void> {
        this.#closed = true;
        await this.#queue.catch(() => undefined);
    }

    #enqueue<T>(task: () => Promise<T>): Promise<T> {
        if (this.#closed) {
            return Promise.reject(new StoreWriteError("Kvault is shutting down and saves nothing more; this change was not saved."));
        }
        const run = this.#queue.then(task);
        this.#queue = run.catch(() => undefined);
        return run;
    }

    #snapshot(): LoadedWorkspaces {
        return {
            // A chat without branches is sent as it was before branches (no `branches` field).
            workspaces: this.#workspaces.map(({ branches, ...workspace }) => ({
                ...workspace,
                messages: [...workspace.messages],
                ...(branches === undefined || branches.length === 0 ? {} : { branches: [...branches] })
            })),
            selectedId: this.#selectedId,
            problems: [...this.#problems]
        };
    }

    #find(id: string): StoredWorkspace {
        const workspace = this.#workspaces.find((item) => item.id === id);
        if (workspace === undefined) {
            throw new WorkspaceNotFoundError(id);
        }
        return workspace;
    }

    #setChat(id: string, chat: BranchedChat): void {
        this.#workspaces = this.#workspaces.map((workspace) =>
            workspace.id === id ? { ...workspace, messages: chat.messages, branches: chat.branches } : workspace
        );
    }

    #journal(id: string): ChatJournal {
        return new ChatJournal(this.paths.journal(id));
    }

    async #append(workspace: string, record: JournalRecord): Promise<void> {
        const journal = this.#journal(workspace);
        await journal.append(record).catch((error: unknown) => {
            throw writeError(`Could not save to ${journal.filePath}`, error);
        });
    }

    async #writeMetadata(workspaces: readonly WorkspaceMeta[], selectedId: string | null): Promise<void> {
        const text = encodeMetadata({
            selectedId,
            workspaces: workspaces.map(metaOf)
        });
        await writeFileAtomic(this.paths.metadata, text).catch((error: unknown) => {
            throw writeError(`Could not save the workspace list to ${this.paths.metadata}`, error);
        });
    }
}

/** A file system error as a StoreWriteError that says what to do. */
function writeError(what: string, error: unknown): StoreWriteError {
    const code = (error as NodeJS.ErrnoException).code;
    const remedy =
        code === "ENOSPC"
            ? "The disk is full: free some space, then try again."
            : code === "EACCES" || code === "EPERM" || code === "EROFS"
              ? "Kvault may not write there: check the folder's permissions."
              : "Check the disk, then try again.";
    return new StoreWriteError(
        `${what}: ${(error as Error).message ?? String(error)}. This change is not saved; what was saved before is intact. ${remedy}`,
        { cause: error }
    );
}
