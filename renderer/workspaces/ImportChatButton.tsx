import { useRef, useState } from "react";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { useWorkspaceStore } from "../stores/workspaceStore.js";
import { importChatFile } from "./chatTransfer.js";

/** Import JSON: a chat file that Export JSON wrote becomes a new workspace; a bad file says why, in place. */
export function ImportChatButton({ disabled }: { readonly disabled: boolean }) {
    const { rpc } = useAppServices();
    const input = useRef<HTMLInputElement>(null);
    const [state, setState] = useState<{ kind: "idle" } | { kind: "importing" } | { kind: "failed"; message: string }>({ kind: "idle" });
    return (
        <>
            <button
                type="button"
                onClick={() => input.current?.click()}
                disabled={disabled || state.kind === "importing"}
                aria-label="Import a chat from a JSON file"
            >
                Import
            </button>
            <input
                ref={input}
                type="file"
                accept=".json,application/json"
                hidden
                aria-label="Chat file to import"
                onChange={(event) => {
                    const file = event.target.files?.[0];
                    event.target.value = "";
                    if (file === undefined) {
                        return;
                    }
                    setState({ kind: "importing" });
                    file.text()
                        .then((text) => importChatFile(rpc, useWorkspaceStore, text))
                        .then(
                            () => setState({ kind: "idle" }),
                            (error: unknown) => setState({ kind: "failed", message: `${file.name}: ${toRpcError(error).message}` })
                        );
                }}
            />
            {state.kind === "failed" && (
                <p className="inline-error import-error" role="alert">
                    {state.message}{" "}
                    <button
                        type="button"
                        className="link-button"
                        onClick={() => setState({ kind: "idle" })}
                        aria-label="Dismiss the import error"
                    >
                        Dismiss
                    </button>
                </p>
            )}
        </>
    );
}
