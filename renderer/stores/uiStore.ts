import { create } from "zustand";

export interface UiState {
    /** The page map is open: snapshots come several times a second instead of once. */
    readonly pageMapOpen: boolean;
    setPageMapOpen(open: boolean): void;
    /** The isolation panel is open: the audit runs every few seconds. */
    readonly isolationOpen: boolean;
    setIsolationOpen(open: boolean): void;
}

/** UI-only state that more than one component reads. */
export const useUiStore = create<UiState>()((set) => ({
    pageMapOpen: true,
    setPageMapOpen: (pageMapOpen) => set({ pageMapOpen }),
    isolationOpen: true,
    setIsolationOpen: (isolationOpen) => set({ isolationOpen })
}));
