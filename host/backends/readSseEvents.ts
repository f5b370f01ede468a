// Server-sent events from a backend's streamed answer (OpenAI's `stream: true`), read as the
// standard says (lines, `data:` fields joined by newlines, an empty line ends an event; comments
// and other fields are skipped) and bounded: an event over maxEventBytes, bytes that are not UTF-8
// and a stream that stalls are named errors, never a cut or half-read answer.
import type { BackendConfig } from "./BackendConfig.js";
import { backendLimits, BackendMalformedError, BackendOversizeError } from "./backendErrors.js";
import { stalled } from "./backendHttp.js";

/** Yields each event's data, in order; ends when the body does. `signal` aborts the read (and the request with it). */
export async function* readSseEvents(
    config: BackendConfig,
    response: Response,
    options: { readonly idleMs?: number; readonly maxEventBytes?: number; readonly signal?: AbortSignal } = {}
): AsyncGenerator<string> {
    const idleMs = options.idleMs ?? backendLimits.idleTimeoutMs;
    const maxEventBytes = options.maxEventBytes ?? backendLimits.maxEventBytes;
    const reader = response.body?.getReader();
    if (reader === undefined) {
        throw new BackendMalformedError(`Backend "${config.name}" answered a streamed request with no body.`);
    }
    const decoder = new TextDecoder("utf-8", { fatal: true });
    let pending = "";
    let data: string[] = [];
    let eventChars = 0;
    try {
        for (;;) {
            const chunk = await readWithin(reader, idleMs, config, options.signal);
            let text: string;
            try {
                text = chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
            } catch {
                throw new BackendMalformedError(
                    `Backend "${config.name}" streamed bytes that are not UTF-8; the answer was stopped there.`
                );
            }
            pending += text;
            if (chunk === undefined) {
                pending += "\n\n"; // a last event without its blank line still counts
            }
            let newline: number;
            while ((newline = pending.search(/\r\n|\r|\n/)) !== -1) {
                const line = pending.slice(0, newline);
                pending = pending.slice(newline + (pending.startsWith("\r\n", newline) ? 2 : 1));
                if (line === "") {
                    if (data.length > 0) {
                        yield data.join("\n");
                    }
                    data = [];
                    eventChars = 0;
                } else if (line.startsWith("data:")) {
                    const value = line.slice(line.startsWith("data: ") ? 6 : 5);
                    eventChars += value.length;
                    data.push(value);
                }
                if (eventChars > maxEventBytes) {
                    throw eventTooLarge(config, eventChars, maxEventBytes);
                }
            }
            if (pending.length + eventChars > maxEventBytes) {
                throw eventTooLarge(config, pending.length + eventChars, maxEventBytes);
            }
            if (chunk === undefined) {
                return;
            }
        }
    } finally {
        await reader.cancel().catch(() => undefined);
    }
}

function eventTooLarge(config: BackendConfig, chars: number, limit: number): BackendOversizeError {
    return new BackendOversizeError(
        `Backend "${config.name}" streamed an event of more than ${limit.toLocaleString("en-US")} characters (${chars.toLocaleString("en-US")} so far); Kvault stopped the answer there.`
    );
}

/** The next chunk, undefined at the end; a stall longer than idleMs is BackendTimeoutError, an abort the signal's reason. */
async function readWithin(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    idleMs: number,
    config: BackendConfig,
    signal: AbortSignal | undefined
): Promise<Uint8Array | undefined> {
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(stalled(config, idleMs)), idleMs);
        if (signal !== undefined) {
            onAbort = () => reject(signal.reason);
            if (signal.aborted) {
                onAbort();
            }
            signal.addEventListener("abort", onAbort, { once: true });
        }
    });
    try {
        const { done, value } = await Promise.race([reader.read(), stop]);
        return done ? undefined : value;
    } finally {
        clearTimeout(timer);
        if (onAbort !== undefined) {
            signal?.removeEventListener("abort", onAbort);
        }
    }
}
