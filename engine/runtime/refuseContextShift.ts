import type { LlamaContextSequence } from "node-llama-cpp";
import { KvaultError } from "../core/KvaultError.js";

/** node-llama-cpp tried to shift (truncate) a sequence; the engine admits nothing that would need it. */
export class ContextShiftRefusedError extends KvaultError {
    readonly code = "context_shift_refused";
}

/**
 * Every evaluation passes this: a context shift would silently drop the start of a conversation,
 * so instead of erasing anything it fails the request (admission makes this unreachable; this is
 * the second line).
 */
export const refuseContextShift = {
    strategy: ({ sequence }: { sequence: LlamaContextSequence }): never => {
        throw new ContextShiftRefusedError(
            `The ${sequence.contextSize}-token sequence is full and would have to drop its oldest tokens; Kvault refuses to truncate. Start a new chat or raise the context size.`
        );
    }
};
