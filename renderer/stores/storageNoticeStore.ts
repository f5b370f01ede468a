import { create } from "zustand";
import type { StoreProblem } from "../../contract/workspaces.js";

/** Saves that failed since the notice was last dismissed: the latest reason, and how many. */
export interface SaveFailure {
    readonly message: string;
    readonly numFailed: number;
}

export interface StorageNoticeState {
    /** What the host set aside as damaged when it read the chats; shown until dismissed. */
    readonly problems: readonly StoreProblem[];
    readonly saveFailure: SaveFailure | undefined;
    setProblems(problems: readonly StoreProblem[]): void;
    dismissProblems(): void;
    saveFailed(message: string): void;
    dismissSaveFailure(): void;
}

export function createStorageNoticeStore() {
    return create<StorageNoticeState>()((set) => ({
        problems: [],
        saveFailure: undefined,
        setProblems: (problems) => set({ problems }),
        dismissProblems: () => set({ problems: [] }),
        saveFailed: (message) => set((state) => ({ saveFailure: { message, numFailed: (state.saveFailure?.numFailed ?? 0) + 1 } })),
        dismissSaveFailure: () => set({ saveFailure: undefined })
    }));
}

export type StorageNoticeStore = ReturnType<typeof createStorageNoticeStore>;

/** The page's notices about the chats on disk: problems found at load, and saves that failed. */
export const useStorageNoticeStore: StorageNoticeStore = createStorageNoticeStore();
