import { KvaultError } from "../core/KvaultError.js";

const formatTokens = (count: number): string => count.toLocaleString("en-US");

/** Which measured capacity bounds a request (docs/ARCHITECTURE.md, Admission). */
export type CapacityBound = "window" | "prefill" | "decode" | "pool";

/** The prompt plus the tokens asked for do not fit; rejected before any page was reserved. */
export class ContextLengthExceededError extends KvaultError {
    readonly code = "context_length_exceeded";

    constructor(
        readonly numPromptTokens: number,
        readonly maxTokens: number,
        readonly limit: number,
        readonly boundBy: CapacityBound
    ) {
        const needed = numPromptTokens + maxTokens;
        const bound = boundBy === "window" ? "the context window" : `the measured ${boundBy} capacity`;
        super(
            `This request needs ${formatTokens(needed)} tokens (${formatTokens(numPromptTokens)} of prompt + ${formatTokens(maxTokens)} to generate); ` +
                `the limit is ${formatTokens(limit)}, set by ${bound}. Shorten the prompt, ask for fewer tokens, or start a new chat.`
        );
    }
}

/** Invalid parameters: rejected at the door, nothing reserved. */
export class InvalidRequestError extends KvaultError {
    readonly code = "invalid_request";
}

/** The request was cancelled (by the caller, or because its client went away). */
export class RequestCancelledError extends KvaultError {
    readonly code = "request_cancelled";

    constructor(stage: string) {
        super(`The request was cancelled during ${stage}. Its pages were quarantined and will be scrubbed once in-flight transfers drain.`);
    }
}

/** No decode sequence or not enough free pages right now; retry when a running request ends. */
export class EngineBusyError extends KvaultError {
    readonly code = "engine_busy";
}

/** The engine was disposed while the request ran. */
export class EngineStoppedError extends KvaultError {
    readonly code = "engine_stopped";
}
