import { useEffect } from "react";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { usePageMapModelStore } from "../stores/pageMapModelStore.js";

/** How often the list of loaded models is read again while a view that shows it is on screen: a model loads on a turn and unloads when idle. */
export const LOADED_MODELS_REFRESH_MS = 3_000;

/**
 * Keeps pageMapModelStore's `loaded` current while `active`: the one reader of the loaded models that
 * the Memory view's picker and the Isolation view share (only one view is shown at a time). It asks
 * for the loaded ones only, so an open view never makes the host rescan the model folders. A chosen
 * page map model that unloads gives the map back to the host's own.
 */
export function useLoadedModels(active: boolean): void {
    const { rpc } = useAppServices();
    useEffect(() => {
        if (!active) {
            return;
        }
        let isCurrent = true;
        const read = (): void => {
            if (rpc.status.kind !== "open") {
                return;
            }
            rpc.call("listLocalModels", { loadedOnly: true }).then(
                (list) => {
                    if (!isCurrent) {
                        return;
                    }
                    const loaded = list.several ? list.models.filter((model) => model.loaded) : [];
                    const { model } = usePageMapModelStore.getState();
                    const stillLoaded = model === undefined || loaded.some((candidate) => candidate.id === model);
                    usePageMapModelStore.setState({ loaded, loadedError: undefined, ...(stillLoaded ? {} : { model: undefined }) });
                },
                (failure: unknown) => isCurrent && usePageMapModelStore.setState({ loadedError: toRpcError(failure).message })
            );
        };
        read();
        const timer = setInterval(read, LOADED_MODELS_REFRESH_MS);
        return () => {
            isCurrent = false;
            clearInterval(timer);
        };
    }, [rpc, active]);
}
