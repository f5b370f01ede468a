// The API's request log: one entry per request (time, endpoint, workspace, tokens in and out,
// outcome, milliseconds), kept for the last `capacity` requests and told to listeners as it
// happens (stderr in headless mode, the developer panel through the RPC). The prompt's text is in
// an entry only when the user turned it on (`--log-prompts`): a log is read by more people, and
// kept longer, than a chat.
import type { ServerResponse } from "node:http";
import type { RequestLogEntry } from "../../contract/requestLog.js";

export type { RequestLogEntry } from "../../contract/requestLog.js";

/** What an endpoint tells the log about its request while it serves it (requestNotes). */
export interface RequestFacts {
    workspace?: string;
    promptTokens?: number;
    completionTokens?: number;
    outcome?: string;
    prompt?: string;
}

export const requestLogDefaults = {
    /** Entries kept for `recent` (the developer panel's list). */
    capacity: 500,
    /** A logged prompt is cut to this many characters (marked with "…"): a log line stays a line. */
    maxPromptChars: 500
} as const;

const notes = new WeakMap<ServerResponse, RequestFacts>();

/** Adds what an endpoint knows of its request (the workspace, the usage, a failure's code) to the request's log entry. */
export function noteRequest(response: ServerResponse, facts: RequestFacts): void {
    notes.set(response, { ...notes.get(response), ...facts });
}

export function requestNotes(response: ServerResponse): RequestFacts {
    return notes.get(response) ?? {};
}

export class RequestLog {
    readonly #entries: RequestLogEntry[] = [];
    readonly #listeners = new Set<(entry: RequestLogEntry) => void>();
    readonly #capacity: number;

    constructor(readonly options: { readonly logPrompts: boolean; readonly capacity?: number }) {
        this.#capacity = options.capacity ?? requestLogDefaults.capacity;
    }

    /** Records one request; the prompt is dropped here unless prompts are logged. */
    add(entry: RequestLogEntry): void {
        const kept: RequestLogEntry =
            this.options.logPrompts && entry.prompt !== undefined
                ? { ...entry, prompt: cut(entry.prompt) }
                : (({ prompt: _prompt, ...rest }) => rest)(entry);
        this.#entries.push(kept);
        if (this.#entries.length > this.#capacity) {
            this.#entries.splice(0, this.#entries.length - this.#capacity);
        }
        for (const listener of this.#listeners) {
            listener(kept);
        }
    }

    /** The last `limit` entries, oldest first. */
    recent(limit: number = this.#capacity): readonly RequestLogEntry[] {
        return this.#entries.slice(Math.max(0, this.#entries.length - limit));
    }

    /** Hears each entry as it is added; returns the unsubscribe. */
    subscribe(listener: (entry: RequestLogEntry) => void): () => void {
        this.#listeners.add(listener);
        return () => void this.#listeners.delete(listener);
    }
}

/** One line: `2026-12-02T02:30:00.000Z POST /v1/chat/completions workspace=w tokens=12/8 200 ok 153 ms`. */
export function formatRequestLine(entry: RequestLogEntry): string {
    const tokens =
        entry.promptTokens === null && entry.completionTokens === null ? "-" : `${entry.promptTokens ?? 0}/${entry.completionTokens ?? 0}`;
    const workspace = entry.workspace === null ? "-" : JSON.stringify(entry.workspace);
    const prompt = entry.prompt === undefined ? "" : ` prompt=${JSON.stringify(entry.prompt)}`;
    return `${entry.time} ${entry.endpoint} workspace=${workspace} tokens=${tokens} ${entry.status} ${entry.outcome} ${entry.ms} ms${prompt}`;
}

function cut(text: string): string {
    return text.length <= requestLogDefaults.maxPromptChars ? text : `${text.slice(0, requestLogDefaults.maxPromptChars)}…`;
}
