import { useEffect, useState } from "react";
import type { RetrievalStatus } from "../../contract/retrieval.js";
import { useAttachmentStore } from "../attachments/attachmentStore.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import type { Workspace } from "../workspaces/Workspace.js";

/** The workspace's retrieval switch: files too large to fit go into its own index, and each question takes their nearest chunks. */
export function RetrievalSwitch({ workspace }: { readonly workspace: Workspace }) {
    const { rpc } = useAppServices();
    const [status, setStatus] = useState<RetrievalStatus | undefined>(undefined);
    const [problem, setProblem] = useState<string | undefined>(undefined);
    const show = (next: RetrievalStatus): void => {
        setStatus(next);
        const store = useAttachmentStore.getState();
        if (next.enabled) {
            store.setIndexed(workspace.id, next.files.length);
        } else {
            const { [workspace.id]: _off, ...others } = store.numIndexed;
            useAttachmentStore.setState({ numIndexed: others });
        }
    };
    useEffect(() => {
        rpc.call("retrievalStatus", { workspace: workspace.id }).then(show, (error: unknown) => setProblem(toRpcError(error).message));
        // `show` only writes state: the workspace's id is what this effect follows.
    }, [rpc, workspace.id]);
    return (
        <label className="field retrieval-switch" data-retrieval={status === undefined ? "loading" : status.enabled ? "on" : "off"}>
            <span>
                <input
                    type="checkbox"
                    aria-label="Retrieve from files too large to fit"
                    checked={status?.enabled ?? false}
                    disabled={status === undefined}
                    onChange={(event) =>
                        rpc
                            .call("setRetrieval", { workspace: workspace.id, enabled: event.target.checked })
                            .then(show, (error: unknown) => setProblem(toRpcError(error).message))
                    }
                />{" "}
                Retrieve from files too large to fit
            </span>
            <span className="field-hint">
                {status?.enabled === true
                    ? `This workspace's own index: ${status.files.length === 0 ? "no files yet" : status.files.map((file) => `${file.name} (${file.numChunks} chunks)`).join(", ")}. Each question takes the nearest chunks, named in the message.`
                    : "Off: a file that does not fit is refused."}
            </span>
            {problem !== undefined && (
                <span className="inline-error" role="alert">
                    {problem}
                </span>
            )}
        </label>
    );
}
