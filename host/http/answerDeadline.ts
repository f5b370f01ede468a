import type { ServerResponse } from "node:http";
import { OpenAiError } from "./OpenAiError.js";

/** An answer's lifetime: aborted when its client goes away or when it runs past the request limit. */
export interface AnswerDeadline {
    readonly signal: AbortSignal;
    /** Whether the limit, not the client, aborted it. */
    readonly timedOut: boolean;
    /** The 504 for an answer the limit cut off. */
    timeoutError(): OpenAiError;
    /** Stops watching; idempotent. */
    dispose(): void;
}

/**
 * Watches `response` for the API's turns and the gateway's forwarded requests alike: a client that
 * closes the connection before the answer is written aborts it, and so does `timeoutMs` passing.
 */
export function watchAnswer(response: ServerResponse, timeoutMs: number): AnswerDeadline {
    const controller = new AbortController();
    let timedOut = false;
    const onClose = (): void => {
        if (!response.writableFinished) {
            controller.abort();
        }
    };
    response.on("close", onClose);
    const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
    }, timeoutMs);
    return {
        signal: controller.signal,
        get timedOut() {
            return timedOut;
        },
        timeoutError: () =>
            new OpenAiError(
                504,
                `The request ran longer than the limit of ${Math.round(timeoutMs / 1000)} s and was cancelled. Ask for fewer tokens or retry.`,
                "server_error",
                "request_timeout"
            ),
        dispose: () => {
            clearTimeout(timer);
            response.off("close", onClose);
        }
    };
}
