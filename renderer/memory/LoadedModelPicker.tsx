import { useEffect, useState } from "react";
import type { LocalModelChoice } from "../../contract/models.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useViewStore } from "../shell/viewStore.js";
import { usePageMapModelStore } from "../stores/pageMapModelStore.js";

/** How often the list of loaded models is read again while the Memory view is shown: a model loads on a turn and unloads when idle. */
const LOADED_MODELS_REFRESH_MS = 3_000;

/**
 * Which loaded model's page map the Memory view shows: the host's own, or a local model a workspace
 * or a request loaded (listLocalModels' loaded ones). Shown only where the host runs several. A
 * model that unloads while chosen gives the map back to the host's own, and so does leaving the
 * Memory view: the status bar's counters read the same snapshot, and they are the host's own model's.
 */
export function LoadedModelPicker() {
    const { rpc } = useAppServices();
    const chosen = usePageMapModelStore((state) => state.model);
    const setModel = usePageMapModelStore((state) => state.setModel);
    const [loaded, setLoaded] = useState<readonly LocalModelChoice[] | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);
    const shown = useViewStore((state) => state.view === "memory");

    useEffect(() => {
        if (!shown) {
            setModel(undefined);
            return;
        }
        let isCurrent = true;
        const read = (): void => {
            if (rpc.status.kind !== "open") {
                return;
            }
            rpc.call("listLocalModels", {}).then(
                (list) => {
                    if (!isCurrent) {
                        return;
                    }
                    const models = list.several ? list.models.filter((model) => model.loaded) : [];
                    setLoaded(models);
                    setError(undefined);
                    const { model } = usePageMapModelStore.getState();
                    if (model !== undefined && !models.some((candidate) => candidate.id === model)) {
                        setModel(undefined);
                    }
                },
                (failure: unknown) => isCurrent && setError(toRpcError(failure).message)
            );
        };
        read();
        const timer = setInterval(read, LOADED_MODELS_REFRESH_MS);
        return () => {
            isCurrent = false;
            clearInterval(timer);
        };
    }, [rpc, setModel, shown]);

    if (loaded === undefined || loaded.length < 2) {
        return error === undefined ? null : <span className="settings-help">Loaded models: {error}</span>;
    }
    const own = loaded.find((model) => model.source === "own")?.id;
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
