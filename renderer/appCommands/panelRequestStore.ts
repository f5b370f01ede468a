import { create, type StoreApi, type UseBoundStore } from "zustand";

/** The panels a menu command can ask to be shown: the Models and Settings views (App.tsx shows the view, the panel scrolls into it). */
export type RevealablePanel = "model" | "settings";

export interface PanelRequestState {
    /**
     * How many times each panel was asked to show itself; a panel opens when its count moves
     * (useRevealOnRequest), so asking twice opens it twice even if it was closed in between.
     */
    readonly requests: { readonly [P in RevealablePanel]: number };
    /** The GGUF path the menu's Open Model… chose last: the model panel puts it in its path box. */
    readonly modelFile: string | undefined;
    reveal(panel: RevealablePanel): void;
    /** Shows the model panel with `path` in its path box. */
    showModelFile(path: string): void;
}

export type PanelRequestStore = UseBoundStore<StoreApi<PanelRequestState>>;

/** Requests from the application menu (contract/appCommands.ts) to panels the renderer does not otherwise control. */
export function createPanelRequestStore(): PanelRequestStore {
    return create<PanelRequestState>()((set) => ({
        requests: { model: 0, settings: 0 },
        modelFile: undefined,
        reveal: (panel) => set((state) => ({ requests: { ...state.requests, [panel]: state.requests[panel] + 1 } })),
        showModelFile: (path) => set((state) => ({ modelFile: path, requests: { ...state.requests, model: state.requests.model + 1 } }))
    }));
}

/** The page's one store (tests make their own). */
export const usePanelRequestStore = createPanelRequestStore();
