import type { AuditFeed, AuditSummary } from "../../contract/isolation.js";

/** Between the engine's own audits (ms): I1–I7 every second (docs/ARCHITECTURE.md, The audit). */
export const DEFAULT_AUDIT_INTERVAL_MS = 1_000;

/** The environment variable that sets the engine process's audit interval, in ms ("0" turns the periodic audit off). */
export const AUDIT_INTERVAL_ENV = "KVAULT_AUDIT_INTERVAL_MS";

/**
 * The engine process's audit interval: `KVAULT_AUDIT_INTERVAL_MS` (a whole number of ms from 100
 * up, or 0 for none), else every second. A value it cannot use is reported in `problem` and the default kept.
 */
export function auditIntervalFromEnvironment(env: Readonly<Record<string, string | undefined>>): {
    readonly intervalMs: number | undefined;
    readonly problem?: string;
} {
    const text = env[AUDIT_INTERVAL_ENV];
    if (text === undefined || text.trim() === "") {
        return { intervalMs: DEFAULT_AUDIT_INTERVAL_MS };
    }
    const value = Number(text);
    if (value === 0) {
        return { intervalMs: undefined };
    }
    if (Number.isSafeInteger(value) && value >= 100) {
        return { intervalMs: value };
    }
    return {
        intervalMs: DEFAULT_AUDIT_INTERVAL_MS,
        problem: `${AUDIT_INTERVAL_ENV} is ${JSON.stringify(text.slice(0, 40))}; use 0 (off) or a whole number of ms from 100. Auditing every ${DEFAULT_AUDIT_INTERVAL_MS} ms.`
    };
}

/**
 * Runs the audit on a timer and keeps what the UI needs of the results: the latest, the last that
 * found a violation, counts. The next audit is scheduled when one ends, so two never overlap and a
 * slow one delays the next instead of piling up. Timers are unref'd: the audit keeps no process alive.
 */
export class PeriodicAudit {
    #timer: ReturnType<typeof setTimeout> | undefined;
    #running: Promise<void> | undefined;
    #stopped = true;
    #numRuns = 0;
    #numRunsWithViolations = 0;
    #latest: AuditSummary | undefined;
    #lastWithViolations: AuditSummary | undefined;

    constructor(
        /** Runs one audit; a rejection is logged and the schedule goes on. */
        private readonly run: () => Promise<AuditSummary>,
        readonly intervalMs: number = DEFAULT_AUDIT_INTERVAL_MS,
        private readonly log: (line: string) => void = () => undefined
    ) {
        if (!Number.isFinite(intervalMs) || intervalMs < 10) {
            throw new RangeError(`An audit interval of ${intervalMs} ms is not a positive number of at least 10 ms.`);
        }
    }

    get isRunning(): boolean {
        return !this.#stopped;
    }

    start(): void {
        if (!this.#stopped) {
            return;
        }
        this.#stopped = false;
        this.#schedule();
    }

    /** Stops the timer; resolves once an audit in flight has ended. Idempotent. */
    async stop(): Promise<void> {
        this.#stopped = true;
        clearTimeout(this.#timer);
        this.#timer = undefined;
        await this.#running;
    }

    /** Counts an audit's result, periodic or run on demand. */
    record(summary: AuditSummary): void {
        this.#numRuns++;
        if (this.#latest === undefined || summary.at >= this.#latest.at) {
            this.#latest = summary;
        }
        if (!summary.ok) {
            this.#numRunsWithViolations++;
            this.#lastWithViolations = summary;
        }
    }

    feed(): AuditFeed {
        return {
            intervalMs: this.intervalMs,
            numRuns: this.#numRuns,
            numRunsWithViolations: this.#numRunsWithViolations,
            ...(this.#latest === undefined ? {} : { latest: this.#latest }),
            ...(this.#lastWithViolations === undefined ? {} : { lastWithViolations: this.#lastWithViolations })
        };
    }

    #schedule(): void {
        if (this.#stopped) {
            return;
        }
        this.#timer = setTimeout(() => {
            this.#timer = undefined;
            this.#running = this.run()
                .then(
                    () => undefined, // the runner records its own result, so on-demand audits count too
                    (error: unknown) => this.log(`the periodic audit failed: ${error instanceof Error ? error.message : String(error)}`)
                )
                .finally(() => {
                    this.#running = undefined;
                    this.#schedule();
                });
        }, this.intervalMs);
        this.#timer.unref?.();
    }
}
