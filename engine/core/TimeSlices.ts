import { invariant } from "./invariant.js";

/**
 * A long synchronous job cut into slices of at most about `budgetMs` of the event loop: the job
 * calls `await slices.pause()` between two units of its work, which resolves at once while the slice
 * has time left and otherwise after one turn of the event loop, where streams' tokens and their
 * next decode steps go. One per job: the clock starts when it is made.
 */
export class TimeSlices {
    #sliceStartedAt = performance.now();
    #numPauses = 0;

    constructor(readonly budgetMs: number) {
        invariant(Number.isFinite(budgetMs) && budgetMs >= 0, () => `a time slice of ${budgetMs} ms`);
    }

    /** Turns of the event loop given back so far. */
    get numPauses(): number {
        return this.#numPauses;
    }

    async pause(): Promise<void> {
        if (performance.now() - this.#sliceStartedAt < this.budgetMs) {
            return;
        }
        this.#numPauses++;
        await new Promise<void>((resolve) => setImmediate(resolve));
        this.#sliceStartedAt = performance.now();
    }
}
