// What can go wrong talking to a remote backend, each a named error with a stable `code`: the
// message names the backend, the URL, the numbers, and what to do. Everything a backend sends is
// untrusted input; none of these is a crash, and none is a silently cut or ignored answer.
import { KvaultError } from "../../engine/index.js";

/** The backend could not be reached at all (refused, DNS, TLS, reset before an answer). */
export class BackendUnreachableError extends KvaultError {
    readonly code = "backend_unreachable";
}

/** The backend answered with an HTTP status other than 2xx; `status` is its status, `detail` its error message, cut to 300 characters. */
export class BackendStatusError extends KvaultError {
    readonly code = "backend_http_error";

    constructor(
        readonly status: number,
        message: string,
        readonly detail: string
    ) {
        super(message);
    }
}

/** No answer (headers, the next byte, or the whole body) within the time limit. */
export class BackendTimeoutError extends KvaultError {
    readonly code = "backend_timeout";
}

/** The backend sent bytes that are not what its API promises: not JSON, not SSE, a chunk without the fields a chunk has. */
export class BackendMalformedError extends KvaultError {
    readonly code = "backend_malformed_response";
}

/** The backend sent more than Kvault reads from it: a body, an event line or an answer over its limit (in bytes or characters). */
export class BackendOversizeError extends KvaultError {
    readonly code = "backend_response_too_large";
}

/** A workspace or a request names a backend this Kvault does not have now (not started with it, or removed in the settings). */
export class BackendNotFoundError extends KvaultError {
    readonly code = "backend_not_found";
}

/** The bounds on what Kvault reads from a backend (a policy: RemoteBackend takes it at construction). */
export interface BackendLimits {
    readonly maxBodyBytes: number;
    readonly maxEventBytes: number;
    readonly maxAnswerChars: number;
    readonly headersTimeoutMs: number;
    readonly idleTimeoutMs: number;
    readonly quickTimeoutMs: number;
    readonly maxDetailChars: number;
}

export const backendLimits: BackendLimits = Object.freeze({
    /** A JSON answer (models, a whole completion, tokenize, props, metrics), in bytes. */
    maxBodyBytes: 16 * 1024 * 1024,
    /** One server-sent event (its data lines together), in bytes. */
    maxEventBytes: 1024 * 1024,
    /** An answer streamed in full, in characters of its text: a workspace's turn, Ollama's API and the gateway's relay alike. */
    maxAnswerChars: 4 * 1024 * 1024,
    /** Waiting for the response headers of a streamed answer (a turn, a forwarded stream) or of embeddings, ms; apart from idleTimeoutMs. */
    headersTimeoutMs: 30_000,
    /** Waiting for the next byte of a streamed answer (a model may prefill a long prompt first), ms. */
    idleTimeoutMs: 300_000,
    /** A request that is not a turn (models, tokenize, props, metrics), in full, ms. */
    quickTimeoutMs: 10_000,
    /** The error text kept from a backend's non-2xx answer, in characters. */
    maxDetailChars: 300
});

/** The answer ran past `maxAnswerChars` characters of text; `advice` says how to ask for less. */
export function answerTooLong(name: string, maxAnswerChars: number, advice: string): BackendOversizeError {
    return new BackendOversizeError(
        `Backend "${name}" streamed an answer of more than ${maxAnswerChars.toLocaleString("en-US")} characters; Kvault stopped it there. ${advice}`
    );
}

/** The backend's stream carried an error in place of the rest of the answer (OpenAI's `{"error": …}` event). */
export class BackendAnswerError extends KvaultError {
    readonly code = "backend_answer_error";
}
