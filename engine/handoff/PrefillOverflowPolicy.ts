/**
 * What prefill evaluates of a prompt that holds more tokens than its sequence has room for. After
 * admission that is a bug, so the production policy hands every token on and the prefill
 * context's own bound refuses them (an `InvariantError` with the numbers). A fault drill's sandbox
 * receives the 2026 incident's behaviour instead (engine/drills/).
 */
export interface PrefillOverflowPolicy {
    /** The tokens to evaluate of `tokens`, on top of `numHeld`, in a sequence of `capacity` positions with pages of `pageTokens`. */
    tokensToEvaluate(tokens: readonly number[], numHeld: number, capacity: number, pageTokens: number): readonly number[];
}

/** Every token goes to prefill: an overflow is refused there, never shortened. */
export const refusePrefillOverflow: PrefillOverflowPolicy = Object.freeze({
    tokensToEvaluate: (tokens: readonly number[]): readonly number[] => tokens
});
