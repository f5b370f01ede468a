import type { EngineErrorPayload } from "../../contract/engineProtocol.js";
import { KvaultError } from "../core/KvaultError.js";

/** What a failure that is not a KvaultError (a bug, or a native library's error) becomes, given its message. */
export type UnexpectedErrorPayload = (detail: string) => EngineErrorPayload;

const unexpectedDuringTurn: UnexpectedErrorPayload = (detail) => ({
    code: "engine_internal_error",
    message: `The engine failed unexpectedly (${detail}); this request was not served. Send it again, and report a bug if it repeats.`
});

/**
 * What crosses the process boundary for a failure: a KvaultError keeps its code and message;
 * anything else is reported under one code so hosts can tell the two apart.
 */
export function toErrorPayload(error: unknown, unexpected: UnexpectedErrorPayload = unexpectedDuringTurn): EngineErrorPayload {
    if (error instanceof KvaultError) {
        return { code: error.code, message: error.message };
    }
    return unexpected(error instanceof Error ? error.message : String(error));
}
