import { useState } from "react";
import type { AppSettingsView } from "../../contract/settings.js";
import { localApiPorts } from "../../contract/settings.js";
import { useAppServices } from "../AppServices.js";
import { CopyButton } from "../chat/CopyButton.js";
import { toRpcError } from "../rpc/RpcError.js";

/**
 * The OpenAI-compatible API: the desktop app's switch and port (setLocalApi, on 127.0.0.1), or,
 * headless, the server itself, shown as it runs (its address and port are its options).
 */
export function LocalApiSection({ view, onView }: { readonly view: AppSettingsView; readonly onView: (view: AppSettingsView) => void }) {
    const { rpc } = useAppServices();
    const { localApi } = view;
    const [enabled, setEnabled] = useState(localApi.enabled);
    const [port, setPort] = useState(String(localApi.port));
    const [applying, setApplying] = useState(false);
    const [error, setError] = useState<string | undefined>(undefined);

    const apply = (): void => {
        setApplying(true);
        setError(undefined);
        rpc.call("setLocalApi", { enabled, port: Number(port) })
            .then(
                (next) => {
                    onView(next);
                    setEnabled(next.localApi.enabled);
                    setPort(String(next.localApi.port));
                },
                (failure: unknown) => setError(toRpcError(failure).message)
            )
            .finally(() => setApplying(false));
    };
    return (
        <section className="settings-section" aria-labelledby="local-api-heading" data-local-api={localApi.url === null ? "off" : "on"}>
            <h3 id="local-api-heading">OpenAI-compatible API</h3>
            <p>
                {localApi.url !== null ? (
                    <>
                        Serving at <code>{localApi.url}/v1</code>
                        {localApi.apiKey !== null ? (
                            <>
                                {" "}
                                with the key <code>{localApi.apiKey}</code> <CopyButton text={localApi.apiKey} label="Copy the API key" />
                            </>
                        ) : (
                            " with the key the server printed at start (--api-key or KVAULT_API_KEY), or a key below."
                        )}
                    </>
                ) : localApi.problem !== null ? (
                    localApi.problem.message
                ) : (
                    "Off: only this window uses the engine."
                )}
            </p>
            {localApi.editable ? (
                <form
                    className="settings-form"
                    onSubmit={(event) => {
                        event.preventDefault();
                        apply();
                    }}
                >
                    <label>
                        <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.currentTarget.checked)} /> Serve it
                        on 127.0.0.1 (programs on this machine only)
                    </label>
                    <label htmlFor="local-api-port">
                        Port ({localApiPorts.min} to {localApiPorts.max})
                    </label>
                    <input
                        id="local-api-port"
                        type="number"
                        min={localApiPorts.min}
                        max={localApiPorts.max}
                        value={port}
                        onChange={(event) => setPort(event.currentTarget.value)}
                    />
                    <div className="settings-actions">
                        <button type="submit" disabled={applying} aria-label="Apply the local API settings">
                            {applying ? "Applying…" : "Apply"}
                        </button>
                    </div>
                </form>
            ) : (
                <p className="settings-help">This server is the API: its address and port are its options (--host, --port).</p>
            )}
            {error !== undefined && (
                <p className="settings-error" role="alert">
                    {error}
                </p>
            )}
        </section>
    );
}
