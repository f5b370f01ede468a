import { create, type UseBoundStore, type StoreApi } from "zustand";
import { chatBranches, type ChatBranches } from "../../contract/chatBranches.js";
import { newId } from "../util/newId.js";
import { defaultWorkspaceSettings, workspaceLimits } from "../workspaces/workspaceDefaults.js";
import type { WorkspaceBackend } from "../../contract/workspaces.js";
import type { StoredMessage, Workspace, WorkspaceSettings } from "../workspaces/Workspace.js";
import { nextFreeColour, type WorkspaceColour } from "../workspaces/workspacePalette.js";

/** Whether the workspaces have come from the host yet (WorkspaceSync); until then the list is not shown, not empty. */
export type WorkspaceLoad =
    | { readonly kind: "loading" }
    | { readonly kind: "ready" }
    | { readonly kind: "failed"; readonly message: string };

export interface WorkspaceState {
    readonly load: WorkspaceLoad;
    readonly workspaces: readonly Workspace[];
    readonly selectedId: string | undefined;
    /** Replaces everything with what the host keeps; the load is then ready. */
    hydrate(workspaces: readonly Workspace[], selectedId: string | null): void;
    loadFailed(message: string): void;
    /** Adds a workspace named "Workspace N" in the next free colour, selects it and returns it. */
    create(): Workspace;
    rename(id: string, name: string): void;
    setColour(id: string, colour: WorkspaceColour): void;
    /** Removes the workspace and its chat; selects a neighbour. The engine's copy is the caller's to forget. */
    remove(id: string): void;
    select(id: string): void;
    updateSettings(id: string, patch: Partial<WorkspaceSettings>): void;
    /** Where its turns run: a remote backend's model, or undefined for this computer's engine. */
    setBackend(id: string, backend: WorkspaceBackend | undefined): void;
    /** Which local model runs its turns and measures it: one of listLocalModels' by name, or undefined for the host's own. */
    setLocalModel(id: string, model: string | undefined): void;
    /** Adds a message after its parent (absent: after the chat's last message) and shows its branch (contract/chatBranches.ts). */
    appendMessage(id: string, message: StoredMessage): void;
    /** Drops the last message if it is an answer, returning it. */
    dropLastAnswer(id: string): StoredMessage | undefined;
    /** Shows the branch through `messageId` (the ‹ › arrows). */
    selectBranch(id: string, messageId: string): void;
    /** Deletes one message; the ones after it follow the one before it. */
    deleteMessage(id: string, messageId: string): void;
    /** Empties the chat, its branches too. */
    clearChat(id: string): void;
    /** Adds a workspace the host has saved already (a duplicate, an imported chat): WorkspaceSync sends nothing for it. */
    adopt(workspace: Workspace): void;
}

/** Workspaces that came whole from the host (adopt): saved there already. */
const savedByHost = new WeakSet<Workspace>();

/** Whether `workspace` is one the host saved itself (WorkspaceSync then writes nothing for it). */
export function isSavedByHost(workspace: Workspace): boolean {
    return savedByHost.has(workspace);
}

export type WorkspaceStore = UseBoundStore<StoreApi<WorkspaceState>>;

/**
 * The workspaces and their chats, a mirror of what the host keeps: WorkspaceSync loads them and
 * writes each change made here through the RPC. Only whole messages enter it (a turn in flight
 * lives in turnStore; an error never becomes a message). `initial` is for tests: a store that is
 * ready from the start.
 */
export function createWorkspaceStore(initial: { readonly load: WorkspaceLoad } = { load: { kind: "ready" } }): WorkspaceStore {
    return create<WorkspaceState>()((set, get) => {
        const updateWorkspace = (id: string, update: (workspace: Workspace) => Workspace): void =>
            set((state) => ({ workspaces: state.workspaces.map((workspace) => (workspace.id === id ? update(workspace) : workspace)) }));
        const updateChat = (id: string, change: (chat: ChatBranches) => void): void =>
            updateWorkspace(id, (workspace) => {
                const chat = chatBranches(workspace);
                change(chat);
                return { ...workspace, ...chat.toChat() };
            });
        return {
            load: initial.load,
            workspaces: [],
            selectedId: undefined,
            hydrate(workspaces, selectedId) {
                set({
                    load: { kind: "ready" },
                    workspaces,
                    selectedId: workspaces.find((workspace) => workspace.id === selectedId)?.id ?? workspaces[0]?.id
                });
            },
            loadFailed(message) {
                set({ load: { kind: "failed", message } });
            },
            create() {
                const { workspaces } = get();
                const numbers = workspaces
                    .map((workspace) => /^Workspace (\d+)$/.exec(workspace.name)?.[1])
                    .map(Number)
                    .filter(Number.isSafeInteger);
                const workspace: Workspace = {
                    id: newId("ui-"),
                    name: `Workspace ${Math.max(0, ...numbers) + 1}`,
                    colour: nextFreeColour(workspaces.map((item) => item.colour)),
                    settings: defaultWorkspaceSettings,
                    messages: []
                };
                set({ workspaces: [...workspaces, workspace], selectedId: workspace.id });
                return workspace;
            },
            rename(id, name) {
                const trimmed = name.trim().slice(0, workspaceLimits.maxNameChars);
                if (trimmed !== "") {
                    updateWorkspace(id, (workspace) => ({ ...workspace, name: trimmed }));
                }
            },
            setColour(id, colour) {
                updateWorkspace(id, (workspace) => ({ ...workspace, colour }));
            },
            remove(id) {
                const { workspaces, selectedId } = get();
                const index = workspaces.findIndex((workspace) => workspace.id === id);
                if (index === -1) {
                    return;
                }
                const rest = workspaces.filter((workspace) => workspace.id !== id);
                const neighbour = rest[Math.min(index, rest.length - 1)];
                set({ workspaces: rest, selectedId: selectedId === id ? neighbour?.id : selectedId });
            },
            select(id) {
                if (get().workspaces.some((workspace) => workspace.id === id)) {
                    set({ selectedId: id });
                }
            },
            updateSettings(id, patch) {
                updateWorkspace(id, (workspace) => ({ ...workspace, settings: { ...workspace.settings, ...patch } }));
            },
            setBackend(id, backend) {
                updateWorkspace(id, ({ backend: _old, ...workspace }) => (backend === undefined ? workspace : { ...workspace, backend }));
            },
            setLocalModel(id, model) {
                updateWorkspace(id, ({ localModel: _old, ...workspace }) =>
                    model === undefined ? workspace : { ...workspace, localModel: model }
                );
            },
            appendMessage(id, message) {
                updateChat(id, (chat) => void chat.append(message));
            },
            dropLastAnswer(id) {
                const last = get()
                    .workspaces.find((workspace) => workspace.id === id)
                    ?.messages.at(-1);
                if (last?.role !== "assistant") {
                    return undefined;
                }
                updateChat(id, (chat) => void chat.delete(last.id));
                return last;
            },
            selectBranch(id, messageId) {
                updateChat(id, (chat) => void chat.select(messageId));
            },
            deleteMessage(id, messageId) {
                updateChat(id, (chat) => void chat.delete(messageId));
            },
            clearChat(id) {
                const workspace = get().workspaces.find((item) => item.id === id);
                if (workspace !== undefined && (workspace.messages.length > 0 || (workspace.branches ?? []).length > 0)) {
                    updateWorkspace(id, (item) => ({ ...item, messages: [], branches: [] }));
                }
            },
            adopt(workspace) {
                if (get().workspaces.some((item) => item.id === workspace.id)) {
                    return;
                }
                savedByHost.add(workspace);
                set((state) => ({ workspaces: [...state.workspaces, workspace] }));
            }
        };
    });
}

/** The app's store: loading until WorkspaceSync has the host's workspaces. */
export const useWorkspaceStore: WorkspaceStore = createWorkspaceStore({ load: { kind: "loading" } });
