// One line of the API's request log (host/http/RequestLog.ts), as the RPC's `requestLog` answers it
// and the developer panel shows it. Never a prompt's text unless the user turned that on (--log-prompts).

export interface RequestLogEntry {
    /** When the request arrived, ISO 8601 UTC. */
    readonly time: string;
    /** Method and path, e.g. "POST /v1/chat/completions". */
    readonly endpoint: string;
    /** The workspace the request named; null for a request with a workspace of its own (or none: tokenize, models). */
    readonly workspace: string | null;
    readonly promptTokens: number | null;
    readonly completionTokens: number | null;
    /** The HTTP status sent (200 also for a stream that then failed: `outcome` says so). */
    readonly status: number;
    /** "ok", or the error's code (e.g. "context_length_exceeded"), or "closed" when the client went away first. */
    readonly outcome: string;
    /** From the request's arrival to its answer's last byte (or the connection's close). */
    readonly ms: number;
    /** The last message's (or the raw prompt's) text, at most `maxPromptChars`; only with --log-prompts. */
    readonly prompt?: string;
}

/** At most this many entries one `requestLog` call returns (the log keeps as many). */
export const MAX_REQUEST_LOG_ENTRIES = 500;
