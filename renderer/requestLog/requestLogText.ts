import type { RequestLogEntry } from "../../contract/requestLog.js";

/** How often the open panel asks for the log again (ms): a developer's view, not a live meter. */
export const REQUEST_LOG_REFRESH_MS = 3_000;
/** Entries the panel shows, newest first. */
export const REQUEST_LOG_SHOWN = 50;

/** "12 → 8 tokens", "40 tokens" (embeddings: in only), or "" for a request without tokens (models, tokenize). */
export function tokensText(entry: RequestLogEntry): string {
    if (entry.promptTokens === null && entry.completionTokens === null) {
        return "";
    }
    if (entry.completionTokens === null) {
        return `${entry.promptTokens ?? 0} tokens`;
    }
    return `${entry.promptTokens ?? 0} → ${entry.completionTokens} tokens`;
}

/** The entry's outcome as shown: "ok", or the status and error code ("400 invalid_request_error"). */
export function outcomeText(entry: RequestLogEntry): string {
    return entry.outcome === "ok" ? "ok" : `${entry.status === 0 ? "no answer" : entry.status} ${entry.outcome}`;
}
