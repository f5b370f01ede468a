/** How the supervisor checks that the engine process still answers; times in milliseconds. */
export interface LivenessOptions {
    /** Pause between one ping's answer and the next ping. */
    readonly pingIntervalMs: number;
    /** A ping unanswered this long marks the engine unresponsive (frozen, stopped, or wedged in native code). */
    readonly pingDeadlineMs: number;
}

/**
 * Pings one engine process, one ping at a time, until disposed; calls `onUnresponsive` once, with
 * the milliseconds waited, when a ping goes unanswered past its deadline. Any other failure of a
 * ping (the process exited, or was shut down) ends the monitoring quietly: the connection reports
 * that itself.
 */
export class LivenessMonitor {
    #timer: NodeJS.Timeout | undefined;
    #disposed = false;

    constructor(
        private readonly ping: (deadlineMs: number) => Promise<unknown>,
        private readonly options: LivenessOptions,
        private readonly onUnresponsive: (waitedMs: number) => void
    ) {
        this.#schedule();
    }

    /** Stops pinging; a ping in flight is ignored when it settles. Idempotent. */
    dispose(): void {
        this.#disposed = true;
        clearTimeout(this.#timer);
        this.#timer = undefined;
    }

    #schedule(): void {
        if (this.#disposed) {
            return;
        }
        // unref: a pending ping never keeps a host process alive on its own.
        this.#timer = setTimeout(() => void this.#pingOnce(), this.options.pingIntervalMs).unref();
    }

    async #pingOnce(): Promise<void> {
        const deadlineMs = this.options.pingDeadlineMs;
        try {
            await this.ping(deadlineMs);
        } catch (error) {
            if (!this.#disposed && (error as { code?: unknown }).code === "engine_timeout") {
                this.dispose();
                this.onUnresponsive(deadlineMs);
            } else {
                this.dispose();
            }
            return;
        }
        this.#schedule();
    }
}
