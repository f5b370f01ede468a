import { useState } from "react";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { downloadFile } from "../util/downloadFile.js";
import { chatJson, chatMarkdown, exportFileName } from "./chatExport.js";
import { duplicateWorkspace } from "./chatTransfer.js";
import type { Workspace } from "./Workspace.js";

/** Export the chat as Markdown (to read) or JSON (to import again, every branch kept), and Duplicate the workspace. */
export function WorkspaceExportButtons({ workspace }: { readonly workspace: Workspace }) {
    const { rpc } = useAppServices();
    const [failure, setFailure] = useState<string | undefined>(undefined);
    return (
        <>
            <button
                type="button"
                onClick={() => downloadFile(exportFileName(workspace, "md"), chatMarkdown(workspace, new Date()), "text/markdown")}
                aria-label={`Export ${workspace.name} as Markdown`}
            >
                Export .md
            </button>
            <button
                type="button"
                onClick={() => downloadFile(exportFileName(workspace, "json"), chatJson(workspace, new Date()), "application/json")}
                aria-label={`Export ${workspace.name} as JSON`}
            >
                Export .json
            </button>
            <button
                type="button"
                onClick={() => {
                    setFailure(undefined);
                    duplicateWorkspace(rpc, useWorkspaceStore, workspace).catch((error: unknown) =>
                        setFailure(`Could not duplicate “${workspace.name}”: ${toRpcError(error).message}`)
                    );
                }}
                aria-label={`Duplicate ${workspace.name}`}
            >
                Duplicate
            </button>
            {failure !== undefined && (
                <span className="inline-error" role="alert">
                    {failure}
                </span>
            )}
        </>
    );
}
