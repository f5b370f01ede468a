import { create } from "zustand";

export interface PageMapModelState {
    /** The loaded local model whose page map the Memory view shows (listLocalModels' id); undefined: the host's own. */
    readonly model: string | undefined;
    setModel(model: string | undefined): void;
}

/** UI-only: which loaded model the engine mirror's snapshot reads (renderer/memory/LoadedModelPicker.tsx chooses it). */
export const usePageMapModelStore = create<PageMapModelState>()((set) => ({
    model: undefined,
    setModel: (model) => set({ model })
}));

/** The snapshot call's params for the model chosen now. */
export function snapshotParams(): { readonly model?: string } {
    const { model } = usePageMapModelStore.getState();
    return model === undefined ? {} : { model };
}
