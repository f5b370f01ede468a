import type { CapacityBound } from "./requestErrors.js";
import { ContextLengthExceededError, InvalidRequestError } from "./requestErrors.js";

/** Capacities measured from what exists, in tokens, plus the configured window. */
export interface MeasuredCapacities {
    readonly window: number;
    readonly prefill: number;
    readonly decode: number;
    readonly pool: number;
}

export interface RequestLimit {
    readonly limit: number;
    readonly boundBy: CapacityBound;
}

/** The advertised limit: the minimum of the window and every measured capacity, and which one it is. */
export function requestLimit(capacities: MeasuredCapacities): RequestLimit {
    let best: RequestLimit = { limit: capacities.window, boundBy: "window" };
    for (const bound of ["prefill", "decode", "pool"] as const) {
        if (capacities[bound] < best.limit) {
            best = { limit: capacities[bound], boundBy: bound };
        }
    }
    return best;
}

/**
 * Which limit admission holds a request to. The engine receives one at construction:
 * `measuredAdmission` always, except in a fault drill's sandbox (engine/drills/).
 */
export interface AdmissionPolicy {
    /** The limit for this window: the configured one and the measured one (`limit`, `boundBy`). */
    limitOf(window: RequestLimit & { readonly configured: number }): RequestLimit;
}

/** The least of the configured window and every measured capacity (docs/ARCHITECTURE.md, handoff step 1). */
export const measuredAdmission: AdmissionPolicy = Object.freeze({
    limitOf: (window: RequestLimit): RequestLimit => ({ limit: window.limit, boundBy: window.boundBy })
});

export type Admission = { readonly ok: true } | { readonly ok: false; readonly error: ContextLengthExceededError | InvalidRequestError };

/** Admission at the door: `prompt + maxTokens ≤ limit`. Pure; reserves nothing. */
export function admit(numPromptTokens: number, maxTokens: number, limit: RequestLimit): Admission {
    if (!Number.isSafeInteger(numPromptTokens) || numPromptTokens < 1) {
        return { ok: false, error: new InvalidRequestError(`The prompt has ${numPromptTokens} tokens; it needs at least 1.`) };
    }
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) {
        return { ok: false, error: new InvalidRequestError(`max_tokens is ${maxTokens}; it must be a whole number of at least 1.`) };
    }
    if (numPromptTokens + maxTokens > limit.limit) {
        return { ok: false, error: new ContextLengthExceededError(numPromptTokens, maxTokens, limit.limit, limit.boundBy) };
    }
    return { ok: true };
}
