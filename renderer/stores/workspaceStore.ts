import { create, type StateCreator, type UseBoundStore, type StoreApi } from "zustand";
import { createJSONStorage, persist, type StateStorage } from "zustand/middleware";
import { newId } from "../util/newId";
import { defaultWorkspaceSettings, workspaceLimits } from "../workspaces/workspaceDefaults";
import type { StoredMessage, Workspace, WorkspaceSettings } from "../workspaces/Workspace";
import { nextFreeColour, type WorkspaceColour } from "../workspaces/workspacePalette";
import { readPersistedWorkspaces } from "./readPersistedWorkspaces";

export interface WorkspaceState {
    readonly workspaces: readonly Workspace[];
    readonly selectedId: string | undefined;
    /** Adds a workspace named "Workspace N" in the next free colour, selects it and returns it. */
    create(): Workspace;
    rename(id: string, name: string): void;
    setColour(id: string, colour: WorkspaceColour): void;
    /** Removes the workspace and its chat; selects a neighbour. The engine's copy is the caller's to forget. */
    remove(id: string): void;
    select(id: string): void;
    updateSettings(id: string, patch: Partial<WorkspaceSettings>): void;
    appendMessage(id: string, message: StoredMessage): void;
    /** Drops the last message if it is an answer (Regenerate), returning it. */
    dropLastAnswer(id: string): StoredMessage | undefined;
    clearChat(id: string): void;
}

export type WorkspaceStore = UseBoundStore<StoreApi<WorkspaceState>>;

/** Where workspaces persist: "kvault.workspaces" in the storage, versioned. */
export const WORKSPACES_STORAGE_KEY = "kvault.workspaces";

/**
 * The workspaces and their chats, the one store the renderer persists. Only whole messages enter
 * it (a turn in flight lives in turnStore; an error never becomes a message).
 */
export function createWorkspaceStore(storage?: StateStorage): WorkspaceStore {
    const initializer: StateCreator<WorkspaceState> = (set, get) => {
        const updateWorkspace = (id: string, update: (workspace: Workspace) => Workspace): void =>
            set((state) => ({ workspaces: state.workspaces.map((workspace) => workspace.id === id ? update(workspace) : workspace) }));
        return {
            workspaces: [],
            selectedId: undefined,
            create() {
                const { workspaces } = get();
                const numbers = workspaces.map((workspace) => /^Workspace (\d+)$/.exec(workspace.name)?.[1]).map(Number).filter(Number.isSafeInteger);
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
                if (trimmed !== "")
                    updateWorkspace(id, (workspace) => ({ ...workspace, name: trimmed }));
            },
            setColour(id, colour) {
                updateWorkspace(id, (workspace) => ({ ...workspace, colour }));
            },
            remove(id) {
                const { workspaces, selectedId } = get();
                const index = workspaces.findIndex((workspace) => workspace.id === id);
                if (index === -1)
                    return;
                const rest = workspaces.filter((workspace) => workspace.id !== id);
                const neighbour = rest[Math.min(index, rest.length - 1)];
                set({ workspaces: rest, selectedId: selectedId === id ? neighbour?.id : selectedId });
            },
            select(id) {
                if (get().workspaces.some((workspace) => workspace.id === id))
                    set({ selectedId: id });
            },
            updateSettings(id, patch) {
                updateWorkspace(id, (workspace) => ({ ...workspace, settings: { ...workspace.settings, ...patch } }));
            },
            appendMessage(id, message) {
                updateWorkspace(id, (workspace) => ({ ...workspace, messages: [...workspace.messages, message] }));
            },
            dropLastAnswer(id) {
                const last = get().workspaces.find((workspace) => workspace.id === id)?.messages.at(-1);
                if (last?.role !== "assistant")
                    return undefined;
                updateWorkspace(id, (workspace) => ({ ...workspace, messages: workspace.messages.slice(0, -1) }));
                return last;
            },
            clearChat(id) {
                updateWorkspace(id, (workspace) => ({ ...workspace, messages: [] }));
            }
        };
    };
    if (storage === undefined)
        return create<WorkspaceState>()(initializer);
    return create<WorkspaceState>()(persist(initializer, {
        name: WORKSPACES_STORAGE_KEY,
        version: 1,
        storage: createJSONStorage(() => storage),
        partialize: (state) => ({ workspaces: state.workspaces, selectedId: state.selectedId }),
        merge: (persisted, current) => {
            const record = typeof persisted === "object" && persisted !== null ? persisted as Record<string, unknown> : {};
            const workspaces = readPersistedWorkspaces(record.workspaces);
            const selectedId = workspaces.find((workspace) => workspace.id === record.selectedId)?.id ?? workspaces[0]?.id;
            return { ...current, workspaces, selectedId };
        }
    }));
}

/** The app's store, persisted in localStorage where the page has it. */
export const useWorkspaceStore: WorkspaceStore = createWorkspaceStore(pageStorage());

function pageStorage(): StateStorage | undefined {
    try {
        return typeof localStorage === "undefined" ? undefined : localStorage;
    } catch {
        return undefined; // storage blocked: the chats live as long as the page
    }
}
