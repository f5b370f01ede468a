import type { EngineErrorPayload } from "../../contract/engineProtocol.js";
import { KvaultError } from "../../engine/index.js";

/** How a process ended, for messages: "SIGKILL" or "exit code 3". */
export function describeExit(code: number | null, signal: string | null): string {
    if (signal !== null) {
        return signal;
    }
    return code === null ? "no exit code" : `exit code ${code}`;
}

/** The engine process ended while this request or call was in it; the supervisor restarts it. */
export class EngineCrashedError extends KvaultError {
    readonly code = "engine_crashed";

    constructor(
        readonly pid: number | undefined,
        readonly exitCode: number | null,
        readonly signal: NodeJS.Signals | null,
        what: "turn" | "call"
    ) {
        super(
            what === "turn"
                ? `The engine process stopped (${describeExit(exitCode, signal)}) while this turn ran. It restarts by itself; send your message again — your chat history is kept.`
                : `The engine process stopped (${describeExit(exitCode, signal)}) before it answered. It restarts by itself; try again in a moment.`
        );
    }
}

/**
 * The engine process stopped answering its liveness pings (frozen, stopped, or stuck in native
 * code) for `waitedMs`: the supervisor killed it and restarts it, and what was in flight ends so.
 */
export class EngineUnresponsiveError extends KvaultError {
    readonly code = "engine_unresponsive";

    constructor(
        readonly waitedMs: number,
        what: "turn" | "call"
    ) {
        const seconds = (waitedMs / 1000).toLocaleString("en-US");
        super(
            `The engine process did not answer for ${seconds} s (a liveness ping went unanswered), so Kvault stopped it and is restarting it. ` +
                (what === "turn"
                    ? "Nothing more will be generated for this turn; send your message again in a moment — your chat history is kept."
                    : "Try again in a moment.")
        );
    }
}

/** The engine is down for good (it kept crashing), or did not come back in the time a call may wait. */
export class EngineUnavailableError extends KvaultError {
    readonly code = "engine_unavailable";
}

/** The engine process could not start: it reported why (`reason`), exited, or never became ready. */
export class EngineStartError extends KvaultError {
    readonly code = "engine_start_failed";

    constructor(
        message: string,
        readonly reason?: EngineErrorPayload
    ) {
        super(message);
    }
}

/** A call (measure, snapshot, audit, a drill, …) got no answer in time; the engine may be wedged. */
export class EngineCallTimeoutError extends KvaultError {
    readonly code = "engine_timeout";
}

/** The request was cancelled before it reached the engine: nothing was generated, nothing reserved. */
export class CancelledBeforeSendError extends KvaultError {
    readonly code = "request_cancelled";

    constructor() {
        super("The request was cancelled before it reached the engine; nothing was generated.");
    }
}

/**
 * A failure the engine process reported, with its code kept (context_length_exceeded,
 * request_cancelled, handoff_checksum_mismatch, …), so hosts map it as if the engine were in process.
 */
export class EngineRequestError extends KvaultError {
    readonly code: string;

    constructor(payload: EngineErrorPayload) {
        super(payload.message);
        this.code = payload.code;
    }
}

/** A call named a local model that is not loaded now (the page map, the audit, the canary and the drills run only on a loaded one). */
export class ModelNotLoadedError extends KvaultError {
    readonly code = "model_not_loaded";
}
