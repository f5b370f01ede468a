import { KvaultError } from "../core/KvaultError.js";

/**
 * llama.cpp would not save or load a sequence's state in memory, or the memory for it could not be
 * had. The request fails alone, having loaded nothing; the engine stays up.
 */
export class SequenceStateError extends KvaultError {
    readonly code = "sequence_state_failed";

    constructor(
        readonly direction: "save" | "load",
        /** Bytes of the state, when known. */
        readonly numBytes: number | undefined,
        /** What went wrong, in words. */
        readonly why: string,
        cause?: unknown
    ) {
        const size = numBytes === undefined ? "" : ` (${numBytes.toLocaleString("en-US")} bytes)`;
        super(
            `The KV state${size} could not be ${direction === "save" ? "saved from" : "loaded into"} its sequence: ${why}. ` +
                "Nothing was generated and its pages were released. " +
                (cause instanceof RangeError
                    ? "Free some memory (close other apps, or lower the context size in the engine settings), then send the message again."
                    : "Send the message again; if it fails again, restart the engine."),
            { cause }
        );
    }
}
