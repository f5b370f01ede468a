import type { EngineErrorPayload } from "../../contract/engineProtocol.js";
import { KvaultError } from "../../engine/index.js";

/**
 * What a caller sees of a failure: a KvaultError's stable code and message (engine errors that
 * crossed the process boundary are KvaultErrors too); anything else is a bug, under one code.
 */
export function toErrorAnswer(error: unknown): EngineErrorPayload {
    if (error instanceof KvaultError) {
        return { code: error.code, message: error.message };
    }
    const detail = error instanceof Error ? error.message : String(error);
    return { code: "internal_error", message: `Kvault failed unexpectedly (${detail}). Try again, and report a bug if it repeats.` };
}
