import type { EngineErrorPayload } from "../../contract/engineProtocol.js";
import { toRpcError } from "../rpc/RpcError.js";

/**
 * The codes with which every engine call fails while no engine is serving: it could not start
 * (no usable llama.cpp binary, a bad model, no `ready` in time), or the supervisor gave up
 * restarting it. Any other failure is one call's, shown where that call was made.
 */
export const engineDownCodes: ReadonlySet<string> = new Set([
    "no_usable_binary",
    "engine_start_failed",
    "model_file_unusable",
    "engine_unavailable"
]);

/** The failure as the window's engine banner shows it, or undefined when it is not the engine being down. */
export function engineProblemOf(error: unknown): EngineErrorPayload | undefined {
    const { code, message } = toRpcError(error);
    return engineDownCodes.has(code) ? { code, message } : undefined;
}
