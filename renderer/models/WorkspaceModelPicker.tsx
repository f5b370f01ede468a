import { useEffect, useState } from "react";
import type { LocalModelList } from "../../contract/models.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import type { Workspace } from "../workspaces/Workspace.js";

/** How each place a model was found is said in the list. */
const SOURCE_NAMES: Readonly<Record<string, string>> = {
    lmstudio: "LM Studio",
    ollama: "Ollama",
    huggingface: "Hugging Face",
    folder: "models folder"
};

/**
 * Which local model runs this workspace's turns and counts its meter (WorkspaceMeta.localModel):
 * the host's own, or one found on disk (listLocalModels, asked when this opens). A chosen model no
 * longer found stays shown, marked so; a workspace on a remote backend runs there instead.
 */
export function WorkspaceModelPicker({ workspace }: { readonly workspace: Workspace }) {
    const { rpc } = useAppServices();
    const [list, setList] = useState<LocalModelList | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);
    useEffect(() => {
        let live = true;
        rpc.call("listLocalModels", {}).then(
            (result) => live && setList(result),
            (failure: unknown) => live && setError(toRpcError(failure).message)
        );
        return () => {
            live = false;
        };
    }, [rpc, workspace.id]);
    const chosen = workspace.localModel ?? "";
    if (list !== undefined && !list.several && chosen === "") {
        return null; // a host that runs one model has nothing to choose
    }
    const [own, ...found] = list?.models ?? [];
    const listed = found.some((model) => model.id === chosen);

    return (
        <label className="field" data-local-model={chosen}>
            <span>Model</span>
            <select
                aria-label="Local model"
                value={chosen}
                disabled={workspace.backend !== undefined}
                onChange={(event) => useWorkspaceStore.getState().setLocalModel(workspace.id, event.target.value || undefined)}
            >
                <option value="">{own === undefined ? "This computer's model" : `${own.id} (this computer's model)`}</option>
                {chosen !== "" && !listed && <option value={chosen}>{`${chosen} (not found now)`}</option>}
                {found.map((model) => (
                    <option key={model.id} value={model.id}>
                        {`${model.id} (${SOURCE_NAMES[model.source] ?? model.source}${model.loaded ? ", loaded" : ""})`}
                    </option>
                ))}
            </select>
            <span className="field-hint" data-local-model-status>
                {error !== undefined
                    ? `The local models could not be listed: ${error}`
                    : workspace.backend !== undefined
                      ? "This workspace runs on a remote backend; choose This computer above to pick a local model."
                      : list === undefined
                        ? "Looking for local models…"
                        : "A chosen model is loaded beside this computer's for this workspace's turns and its meter."}
            </span>
        </label>
    );
}
