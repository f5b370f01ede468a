import { create } from "zustand";

export interface UiState {
    /** The page map is open: snapshots come several times a second instead of once. */
    readonly pageMapOpen: boolean;
    setPageMapOpen(open: boolean): void;
}

/** UI-only state that more than one component reads. */
export const useUiStore = create<UiState>()((set) => ({
    pageMapOpen: true,
    setPageMapOpen: (pageMapOpen) => set({ pageMapOpen })
}));
