import { useViewStore } from "../shell/viewStore.js";
import { ownLoadedModel, usePageMapModelStore } from "../stores/pageMapModelStore.js";
import { useLoadedModels } from "../memory/useLoadedModels.js";
import type { LoadedModelTarget } from "./IsolationController.js";
import { useIsolationModelsStore, type IsolationTarget } from "./isolationModelsStore.js";

/** The select's value for every loaded model: not a model id (ids name files and never start with a space). */
const ALL_MODELS_VALUE = " all";

/** The loaded models a run over all of them visits, the host's own first; empty where the host runs one model. */
export function useLoadedModelTargets(): readonly LoadedModelTarget[] {
    const loaded = usePageMapModelStore((state) => state.loaded);
    const own = ownLoadedModel(loaded);
    return (loaded ?? []).map((model) => ({ id: model.id, own: model.id === own }));
}

/**
 * Which loaded model the audit, the canary and the drills run on: the host's own, another loaded
 * one, or all of them one after another. Reads the loaded models as the Memory view's picker does
 * (useLoadedModels), while the Isolation view is shown; shown only where the host runs several.
 */
export function IsolationModelPicker() {
    const shown = useViewStore((state) => state.view === "isolation");
    useLoadedModels(shown);
    const loaded = usePageMapModelStore((state) => state.loaded);
    const target = useIsolationModelsStore((state) => state.target);
    const setTarget = useIsolationModelsStore((state) => state.setTarget);
    if (loaded === undefined || loaded.length < 2) {
        return null;
    }
    const own = ownLoadedModel(loaded);
    const chosenModel = target.kind === "one" ? (target.model ?? own) : undefined;
    // A model chosen earlier that has since unloaded reads as the host's own, as the calls would refuse it.
    const value = target.kind === "all" ? ALL_MODELS_VALUE : loaded.some((model) => model.id === chosenModel) ? chosenModel : own;
    const choose = (chosen: string): IsolationTarget =>
        chosen === ALL_MODELS_VALUE ? { kind: "all" } : chosen === own ? { kind: "one" } : { kind: "one", model: chosen };
    return (
        <label className="isolation-model-picker" data-isolation-target={target.kind === "all" ? "all" : value}>
            Run on{" "}
            <select
                aria-label="Loaded model the audit, canary and drills run on"
                value={value}
                onChange={(event) => setTarget(choose(event.currentTarget.value))}
            >
                {loaded.map((model) => (
                    <option key={model.id} value={model.id}>
                        {model.id}
                        {model.id === own ? " (this host's model)" : ""}
                    </option>
                ))}
                <option value={ALL_MODELS_VALUE}>All loaded models</option>
            </select>
        </label>
    );
}
