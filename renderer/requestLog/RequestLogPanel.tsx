import { useEffect, useState } from "react";
import type { RequestLogEntry } from "../../contract/requestLog.js";
import { useAppServices } from "../AppServices.js";
import { toRpcError } from "../rpc/RpcError.js";
import { outcomeText, REQUEST_LOG_REFRESH_MS, REQUEST_LOG_SHOWN, tokensText } from "./requestLogText.js";
import "./RequestLogPanel.css";

/**
 * The local API's request log (the RPC's requestLog), newest first: when, which endpoint and
 * workspace, tokens in and out, the outcome and how long it took. Asked for again every few
 * seconds while the panel is open; the prompt's text is there only when the server logs prompts.
 */
export function RequestLogPanel({ open }: { readonly open: boolean }) {
    const { rpc } = useAppServices();
    const [entries, setEntries] = useState<readonly RequestLogEntry[] | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);

    useEffect(() => {
        if (!open) {
            return;
        }
        let isCurrent = true;
        const load = (): void => {
            rpc.call("requestLog", { limit: REQUEST_LOG_SHOWN }).then(
                (answer) => {
                    if (isCurrent) {
                        setEntries(answer);
                        setError(undefined);
                    }
                },
                (failure: unknown) => isCurrent && setError(toRpcError(failure).message)
            );
        };
        load();
        const timer = setInterval(load, REQUEST_LOG_REFRESH_MS);
        return () => {
            isCurrent = false;
            clearInterval(timer);
        };
    }, [rpc, open]);

    return (
        <div className="request-log-panel" aria-live="polite">
            {error !== undefined && (
                <p className="inline-error" role="alert">
                    The request log could not be read: {error}
                </p>
            )}
            {entries !== undefined && entries.length === 0 && (
                <p className="panel-note">No API requests yet. Requests to the local API (/v1/, /api/, /tokenize) are listed here.</p>
            )}
            {entries !== undefined && entries.length > 0 && (
                <ol className="request-log-list" aria-label="API requests, newest first">
                    {[...entries].reverse().map((entry, index) => (
                        <li
                            key={`${entry.time}-${index}`}
                            data-outcome={entry.outcome}
                            className={entry.outcome === "ok" ? "" : "request-log-failed"}
                        >
                            <span className="request-log-time">{new Date(entry.time).toLocaleTimeString()}</span>{" "}
                            <span className="request-log-endpoint">{entry.endpoint}</span>
                            {entry.workspace !== null && <span className="request-log-workspace"> “{entry.workspace}”</span>}
                            <span className="request-log-facts">
                                {" "}
                                {[tokensText(entry), outcomeText(entry), `${entry.ms} ms`].filter((part) => part !== "").join(" · ")}
                            </span>
                            {entry.prompt !== undefined && <q className="request-log-prompt">{entry.prompt}</q>}
                        </li>
                    ))}
                </ol>
            )}
        </div>
    );
}
