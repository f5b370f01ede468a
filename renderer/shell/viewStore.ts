import { create } from "zustand";
import type { AppView } from "./appViews.js";

export interface ViewState {
    /** The view the rail shows; the others stay mounted (hidden) so that a download or a draft survives a switch. */
    readonly view: AppView;
    /** The shortcuts dialog is open. */
    readonly shortcutsOpen: boolean;
    showView(view: AppView): void;
    setShortcutsOpen(open: boolean): void;
}

/** The shell's UI-only state: which view is shown. */
export const useViewStore = create<ViewState>()((set) => ({
    view: "chats",
    shortcutsOpen: false,
    showView: (view) => set({ view }),
    setShortcutsOpen: (shortcutsOpen) => set({ shortcutsOpen })
}));
