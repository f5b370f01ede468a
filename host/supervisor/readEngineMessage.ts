// What the host reads out of the engine process's messages: error payloads checked before they are
// believed, and the start failure built from an exit and its last output.
import type { EngineErrorPayload } from "../../contract/engineProtocol.js";
import type { EngineExit } from "./EngineConnection.js";
import { EngineStartError, describeExit } from "./engineHostErrors.js";

export function startError(exit: EngineExit, reason: EngineErrorPayload | undefined, recentOutput: string | undefined): EngineStartError {
    if (reason !== undefined) {
        return new EngineStartError(`The engine could not start: ${reason.message}`, reason);
    }
    const output = recentOutput?.trim() ?? "";
    return new EngineStartError(
        `The engine process exited (${describeExit(exit.code, exit.signal)}) before it was ready.` +
            (output === "" ? " It wrote nothing to stderr." : ` Its last output:\n${output.slice(-1_000)}`)
    );
}

export function errorPayload(value: unknown): EngineErrorPayload {
    return isErrorPayload(value)
        ? value
        : { code: "engine_internal_error", message: "The engine reported a failure without saying what it was." };
}

export function isErrorPayload(value: unknown): value is EngineErrorPayload {
    return isRecord(value) && typeof value.code === "string" && typeof value.message === "string";
}

export function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
