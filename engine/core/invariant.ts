/** Thrown when the engine's own bookkeeping is wrong: a bug, never an expected outcome (those are values). */
export class InvariantError extends Error {
    override readonly name = "InvariantError";
}

/** Asserts `condition`; the message must carry the numbers that broke it. */
export function invariant(condition: unknown, message: string | (() => string)): asserts condition {
    if (!condition) {
        throw new InvariantError(typeof message === "function" ? message() : message);
    }
}
