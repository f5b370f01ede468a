import { KvaultError } from "../core/KvaultError.js";

/** A sequence state that is not a well-formed llama.cpp state of the supported kind. Nothing was loaded. */
export class StateFormatError extends KvaultError {
    readonly code = "state_malformed";

    constructor(
        message: string,
        readonly offset: number
    ) {
        super(`The sequence state is malformed at byte ${offset}: ${message}. Nothing was loaded; the request ends here.`);
    }
}

/** A well-formed state whose KV geometry differs from the target context's. Nothing was loaded. */
export class StateLayoutMismatchError extends KvaultError {
    readonly code = "state_layout_mismatch";

    constructor(detail: string) {
        super(`The sequence state does not match the target context: ${detail}. Nothing was loaded; the request ends here.`);
    }
}

/** A KV cache type that cannot hold this model's KV (or not without flash attention). Refused before the model is loaded. */
export class KvCacheTypeError extends KvaultError {
    readonly code = "kv_cache_type_unsupported";

    constructor(
        readonly kvCacheType: string,
        readonly reason: string
    ) {
        super(
            `The KV cache cannot be kept in ${kvCacheType.toUpperCase()}: ${reason}. Nothing was loaded; ` +
                "start with the KV cache type f16 (which every model takes), or, where the reason is flash attention, turn it on."
        );
    }
}
