// Every streamed answer of the HTTP API (chat completions' and completions' server-sent events,
// Ollama's NDJSON lines, the gateway's relay) is written through one StreamWriter, so that a client
// that does not read cannot make the host hold the answer's bytes without end. A source that can
// pause (a backend's stream) waits on write()'s promise and so reads no faster than the client
// takes the answer; one that cannot (the local engine's tokens, which share a batch with other
// turns) is stopped once the client has left maxUnreadBytes unread, with ClientNotReadingError.
import type { ServerResponse } from "node:http";
import { OpenAiError } from "./OpenAiError.js";

/** The client left more of a streamed answer unread than the host holds for it; the turn was stopped there. */
export class ClientNotReadingError extends OpenAiError {
    constructor(
        readonly numUnreadBytes: number,
        readonly maxUnreadBytes: number
    ) {
        super(
            400,
            `The client left ${numUnreadBytes.toLocaleString("en-US")} bytes of this streamed answer unread; Kvault holds at most ${maxUnreadBytes.toLocaleString("en-US")} for a client and cannot pause the model, so it stopped the answer there. Read the stream as it comes, or ask with stream: false.`,
            "invalid_request_error",
            "client_not_reading"
        );
    }
}

export class StreamWriter {
    readonly #stop = new AbortController();
    /** While the response's buffer is full: settles once it drains, the client leaves or the writer stops (one wait shared by every write). */
    #drained: Promise<void> | undefined;

    constructor(
        private readonly response: ServerResponse,
        /** Bytes written and not yet taken by the client (the response's and its socket's buffers) past which a write stops the answer. */
        private readonly maxUnreadBytes: number
    ) {}

    /** Aborted, with ClientNotReadingError as its reason, once a write found more than maxUnreadBytes unread: the turn it ends. */
    get stopped(): AbortSignal {
        return this.#stop.signal;
    }

    /**
     * Writes `text`, unless the writer has stopped or the client has left. Resolves at once while
     * the client keeps up, else once it has taken what is buffered, has left, or the writer stopped;
     * never rejects without `signal`, and rejects with `signal`'s reason when it aborts first. A
     * source that can pause awaits the promise before making more; one that cannot ignores it.
     */
    write(text: string, signal?: AbortSignal): Promise<void> {
        if (this.#stop.signal.aborted || this.response.destroyed) {
            return Promise.resolve();
        }
        // checked before writing, so that one long piece to a client that reads never counts as unread
        const numUnreadBytes = this.response.writableLength;
        if (numUnreadBytes > this.maxUnreadBytes) {
            this.#stop.abort(new ClientNotReadingError(numUnreadBytes, this.maxUnreadBytes));
            return Promise.resolve();
        }
        if (this.response.write(text)) {
            return Promise.resolve();
        }
        this.#drained ??= this.#waitForDrain();
        return signal === undefined ? this.#drained : settledOrAborted(this.#drained, signal);
    }

    #waitForDrain(): Promise<void> {
        return new Promise((resolve) => {
            const settle = (): void => {
                this.response.off("drain", settle);
                this.response.off("close", settle);
                this.#stop.signal.removeEventListener("abort", settle);
                this.#drained = undefined;
                resolve();
            };
            this.response.on("drain", settle);
            this.response.on("close", settle);
            this.#stop.signal.addEventListener("abort", settle, { once: true });
        });
    }
}

/** `wait`, or `signal`'s reason as soon as it aborts (the client left, the request's deadline passed). */
function settledOrAborted(wait: Promise<void>, signal: AbortSignal): Promise<void> {
    if (signal.aborted) {
        return Promise.reject(signal.reason ?? new Error("aborted"));
    }
    return new Promise((resolve, reject) => {
        const onAbort = (): void => reject(signal.reason ?? new Error("aborted"));
        signal.addEventListener("abort", onAbort, { once: true });
        void wait.then(() => {
            signal.removeEventListener("abort", onAbort);
            resolve();
        });
    });
}
