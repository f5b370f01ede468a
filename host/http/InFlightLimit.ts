import { OpenAiError } from "./OpenAiError.js";

/**
 * The one count of API requests in flight (running or queued in the engine), shared by every
 * endpoint that reaches the engine: past `max`, a new one is a 429 with Retry-After.
 */
export class InFlightLimit {
    #count = 0;

    constructor(readonly max: number) {}

    get count(): number {
        return this.#count;
    }

    /** Takes a place, or throws the 429; the release it returns gives the place back once, however often it is called. */
    admit(): () => void {
        if (this.#count >= this.max) {
            throw new OpenAiError(
                429,
                `${this.#count} requests are already running or queued, the most this server takes. Retry in a moment.`,
                "rate_limit_error",
                "queue_full",
                null,
                1
            );
        }
        this.#count++;
        let released = false;
        return () => {
            if (!released) {
                released = true;
                this.#count--;
            }
        };
    }
}
