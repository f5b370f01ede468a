import { useEffect, useState } from "react";
import type { AppSettingsView } from "../../contract/KvaultBridge.js";
import { localApiPorts } from "../../contract/KvaultBridge.js";
import { useRevealOnRequest } from "../appCommands/useRevealOnRequest.js";
import { useAppServices } from "../AppServices.js";
import { CopyButton } from "../chat/CopyButton.js";
import { toRpcError } from "../rpc/RpcError.js";
import "../model/ModelPanel.css";

type Loaded =
    | { readonly kind: "loading" }
    | { readonly kind: "ready"; readonly view: AppSettingsView }
    | { readonly kind: "failed"; readonly message: string };

/**
 * The desktop app's settings (getSettings, setLocalApi): the OpenAI-compatible API on 127.0.0.1,
 * switched on and off here. The headless server has none (its settings are its options): it
 * answers settings_unavailable, and this panel shows why.
 */
export function SettingsPanel() {
    const { rpc } = useAppServices();
    const [loaded, setLoaded] = useState<Loaded>({ kind: "loading" });
    const [enabled, setEnabled] = useState(false);
    const [port, setPort] = useState("");
    const [applying, setApplying] = useState(false);
    const [error, setError] = useState<string | undefined>(undefined);
    // Kvault › Settings… opens this panel (renderer/appCommands/).
    const revealRef = useRevealOnRequest("settings");

    const show = (view: AppSettingsView): void => {
        setLoaded({ kind: "ready", view });
        setEnabled(view.localApi.enabled);
        setPort(String(view.localApi.port));
    };

    useEffect(() => {
        let isCurrent = true;
        rpc.call("getSettings", {}).then(
            (view) => isCurrent && show(view),
            (failure: unknown) => isCurrent && setLoaded({ kind: "failed", message: toRpcError(failure).message })
        );
        return () => {
            isCurrent = false;
        };
    }, [rpc]);

    if (loaded.kind !== "ready") {
        return (
            <p className="placeholder" ref={revealRef}>
                {loaded.kind === "loading" ? "Reading the settings…" : loaded.message}
            </p>
        );
    }
    const { localApi, modelPath } = loaded.view;
    const apply = (): void => {
        setApplying(true);
        setError(undefined);
        rpc.call("setLocalApi", { enabled, port: Number(port) })
            .then(show, (failure: unknown) => setError(toRpcError(failure).message))
            .finally(() => setApplying(false));
    };
    return (
        <section
            ref={revealRef}
            className="model-manager"
            aria-labelledby="local-api-heading"
            data-local-api={localApi.url === null ? "off" : "on"}
        >
            <h3 id="local-api-heading">OpenAI-compatible API</h3>
            <p>
                {localApi.url !== null ? (
                    <>
                        Serving at <code>{localApi.url}/v1</code> with the key <code>{localApi.apiKey}</code>{" "}
                        <CopyButton text={localApi.apiKey} label="Copy the API key" />
                    </>
                ) : localApi.problem !== null ? (
                    localApi.problem.message
                ) : (
                    "Off: only this window uses the engine."
                )}
            </p>
            <form
                className="model-open"
                onSubmit={(event) => {
                    event.preventDefault();
                    apply();
                }}
            >
                <label>
                    <input type="checkbox" checked={enabled} onChange={(event) => setEnabled(event.currentTarget.checked)} /> Serve it on
                    127.0.0.1 (programs on this machine only)
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
                <div className="model-actions">
                    <button type="submit" disabled={applying}>
                        {applying ? "Applying…" : "Apply"}
                    </button>
                </div>
            </form>
            {error !== undefined && (
                <p className="model-error" role="alert">
                    {error}
                </p>
            )}
            <p className="placeholder">Model at start: {modelPath ?? "the built-in demo model"}</p>
        </section>
    );
}
