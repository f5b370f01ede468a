import { useEffect, useState } from "react";
import type { BackendView } from "../../contract/backends.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { onBackendsChanged } from "../settings/backendsChanged.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { formatCount } from "../util/formatCount.js";
import type { Workspace } from "./Workspace.js";

/** The select's value for a workspace: "" is this computer, else `NAME/<model id>`. */
export function backendValue(workspace: Pick<Workspace, "backend">): string {
    return workspace.backend === undefined ? "" : `${workspace.backend.name}/${workspace.backend.model}`;
}

/**
 * Where the workspace's turns run: "This computer" (the engine) or a model of one of the remote
 * backends in force (listBackends, asked when this opens and when the settings change them). A backend that cannot be
 * asked is listed with why, and cannot be chosen; a workspace's backend that is gone stays shown.
 */
export function BackendSelect({ workspace }: { readonly workspace: Workspace }) {
    const { rpc } = useAppServices();
    const [backends, setBackends] = useState<readonly BackendView[] | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);
    useEffect(() => {
        let live = true;
        const ask = (): void => {
            rpc.call("listBackends", {}).then(
                (result) => {
                    if (live) {
                        setBackends(result.backends);
                        setError(undefined);
                    }
                },
                (failure: unknown) => live && setError(toRpcError(failure).message)
            );
        };
        ask();
        const unsubscribe = onBackendsChanged(ask); // the settings screen added, changed or removed one
        return () => {
            live = false;
            unsubscribe();
        };
    }, [rpc]);
    const value = backendValue(workspace);
    const listed = (backends ?? []).some((backend) => backend.models.some((model) => `${backend.name}/${model.id}` === value));
    const choose = (chosen: string): void => {
        const slash = chosen.indexOf("/");
        useWorkspaceStore
            .getState()
            .setBackend(workspace.id, chosen === "" ? undefined : { name: chosen.slice(0, slash), model: chosen.slice(slash + 1) });
    };

    return (
        <label className="field">
            <span>Runs on</span>
            <select aria-label="Runs on" value={value} onChange={(event) => choose(event.target.value)}>
                <option value="">This computer</option>
                {value !== "" && !listed && <option value={value}>{`${value} (not offered now)`}</option>}
                {(backends ?? []).map((backend) =>
                    backend.error !== undefined ? (
                        <option key={backend.name} value={`${backend.name}/`} disabled>
                            {`${backend.name}: cannot be asked (${backend.error.code})`}
                        </option>
                    ) : (
                        backend.models.map((model) => (
                            <option key={`${backend.name}/${model.id}`} value={`${backend.name}/${model.id}`}>
                                {`${backend.name}: ${model.id}${model.window === undefined ? "" : ` (window ${formatCount(model.window.tokens)})`}${backend.remote ? ", beyond this machine" : ""}`}
                            </option>
                        ))
                    )
                )}
            </select>
            <span className="field-hint" data-backend-status>
                {error !== undefined
                    ? `The backends could not be listed: ${error}`
                    : backends === undefined
                      ? "Asking the backends…"
                      : backends.length === 0
                        ? "This Kvault has no remote backends (add one in Settings › Remote backends)."
                        : (backends.find((backend) => backend.error !== undefined)?.error?.message ??
                          "Chats on a backend are sent to it; its own server keeps its KV, not Kvault's pages.")}
            </span>
        </label>
    );
}
