import { useEffect } from "react";
import { useViewStore } from "../shell/viewStore.js";
import { ownLoadedModel, usePageMapModelStore } from "../stores/pageMapModelStore.js";
import { useLoadedModels } from "./useLoadedModels.js";

/**
 * Which loaded model's page map the Memory view shows: the host's own, or a local model a workspace
 * or a request loaded (read by useLoadedModels). Shown only where the host runs several. A model
 * that unloads while chosen gives the map back to the host's own, and so does leaving the Memory
 * view: the status bar's counters read the same snapshot, and they are the host's own model's.
 */
export function LoadedModelPicker() {
    const chosen = usePageMapModelStore((state) => state.model);
    const setModel = usePageMapModelStore((state) => state.setModel);
    const loaded = usePageMapModelStore((state) => state.loaded);
    const error = usePageMapModelStore((state) => state.loadedError);
    const shown = useViewStore((state) => state.view === "memory");
    useLoadedModels(shown);

    useEffect(() => {
        if (!shown) {
            setModel(undefined);
        }
    }, [setModel, shown]);

    if (loaded === undefined || loaded.length < 2) {
        return error === undefined ? null : <span className="settings-help">Loaded models: {error}</span>;
    }
    const own = ownLoadedModel(loaded);
    return (
        <label className="loaded-model-picker" data-page-map-model={chosen ?? own}>
            Page map of{" "}
            <select
                aria-label="Loaded model whose page map is shown"
                value={chosen ?? own}
                onChange={(event) => setModel(event.currentTarget.value === own ? undefined : event.currentTarget.value)}
            >
                {loaded.map((model) => (
                    <option key={model.id} value={model.id}>
                        {model.id}
                        {model.source === "own" ? " (this host's model)" : ""}
                    </option>
                ))}
            </select>
        </label>
    );
}
