import { invariant } from "../../engine/index.js";

/**
 * At most `maxRestarts` restarts in any `windowMs`: an engine that crashes on every start (a bad
 * model file, a driver fault) stops being restarted instead of looping. Times are milliseconds
 * on one monotonic clock (performance.now()).
 */
export class RestartBudget {
    /** When each restart within the window was taken, oldest first. */
    readonly #taken: number[] = [];

    constructor(
        readonly maxRestarts: number,
        readonly windowMs: number
    ) {}

    /** Restarts taken in `(now − windowMs, now]`. */
    numRecent(now: number): number {
        this.#forget(now);
        return this.#taken.length;
    }

    canRestart(now: number): boolean {
        return this.numRecent(now) < this.maxRestarts;
    }

    /** Records a restart; call only after `canRestart` said yes. */
    take(now: number): void {
        this.#forget(now);
        invariant(
            this.#taken.length < this.maxRestarts,
            () => `RestartBudget.take: ${this.#taken.length} restarts already taken within ${this.windowMs} ms (max ${this.maxRestarts}).`
        );
        this.#taken.push(now);
    }

    #forget(now: number): void {
        while (this.#taken.length > 0 && this.#taken[0]! <= now - this.windowMs) {
            this.#taken.shift();
        }
    }
}

/** The pause before a restart (the backoff), `ms` long or until `signal` aborts; never rejects. */
export function restartPause(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        signal.addEventListener("abort", done, { once: true });
        function done(): void {
            clearTimeout(timer);
            signal.removeEventListener("abort", done);
            resolve();
        }
    });
}
