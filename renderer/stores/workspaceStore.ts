import { create, type UseBoundStore, type StoreApi } from "zustand";
import { newId } from "../util/newId.js";
import { defaultWorkspaceSettings, workspaceLimits } from "../workspaces/workspaceDefaults.js";
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
    appendMessage(id: string, message: StoredMessage): void;
    /** Drops the last message if it is an answer (Regenerate), returning it. */
    dropLastAnswer(id: string): StoredMessage | undefined;
    clearChat(id: string): void;
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
            appendMessage(id, message) {
                updateWorkspace(id, (workspace) => ({ ...workspace, messages: [...workspace.messages, message] }));
            },
            dropLastAnswer(id) {
                const last = get()
                    .workspaces.find((workspace) => workspace.id === id)
                    ?.messages.at(-1);
                if (last?.role !== "assistant") {
                    return undefined;
                }
                updateWorkspace(id, (workspace) => ({ ...workspace, messages: workspace.messages.slice(0, -1) }));
                return last;
            },
            clearChat(id) {
                const workspace = get().workspaces.find((item) => item.id === id);
                if (workspace !== undefined && workspace.messages.length > 0) {
                    updateWorkspace(id, (item) => ({ ...item, messages: [] }));
                }
            }
        };
    });
}

/** The app's store: loading until WorkspaceSync has the host's workspaces. */
export const useWorkspaceStore: WorkspaceStore = createWorkspaceStore({ load: { kind: "loading" } });
