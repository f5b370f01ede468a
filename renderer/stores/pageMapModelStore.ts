import { create } from "zustand";
import type { LocalModelChoice } from "../../contract/models.js";

export interface PageMapModelState {
    /** The loaded local model whose page map the Memory view shows (listLocalModels' id); undefined: the host's own. */
    readonly model: string | undefined;
    /**
     * The models loaded now, the host's own first (listLocalModels with loadedOnly), as last read while the
     * Memory or Isolation view was shown (renderer/memory/useLoadedModels.ts); empty where the host runs one.
     */
    readonly loaded: readonly LocalModelChoice[] | undefined;
    /** Why the last read of the loaded models failed; undefined after one that did not. */
    readonly loadedError: string | undefined;
    setModel(model: string | undefined): void;
}

/** UI-only: which loaded model the engine mirror's snapshot reads (renderer/memory/LoadedModelPicker.tsx chooses it). */
export const usePageMapModelStore = create<PageMapModelState>()((set) => ({
    model: undefined,
    loaded: undefined,
    loadedError: undefined,
    setModel: (model) => set({ model })
}));

/** The snapshot call's params for the model chosen now. */
export function snapshotParams(): { readonly model?: string } {
    const { model } = usePageMapModelStore.getState();
    return model === undefined ? {} : { model };
}

/** The host's own model's id among the loaded ones, where the host runs several. */
export function ownLoadedModel(loaded: readonly LocalModelChoice[] | undefined): string | undefined {
    return loaded?.find((model) => model.source === "own")?.id;
}
