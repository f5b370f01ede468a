/** The width of one bucket of counted tokens, ms: a rate follows an answer within a tenth of a second. */
const BUCKET_MS = 100;

interface Meter {
    /** Tokens per bucket, by bucket number (ms / BUCKET_MS), only buckets inside the window. */
    readonly buckets: Map<number, number>;
}

/**
 * Generated tokens per second of each workspace over the last `windowSeconds`: counted from the
 * tokens the engine generates (EngineService's onToken), never from a UI timer. A rate is the
 * tokens in the window over the time since the window's first counted bucket began (at most the
 * window), so an answer shows its rate while it runs, not only once a whole second has passed,
 * and an answer that ended fades out over the window. A workspace with no tokens in the window is
 * dropped, so the map holds only workspaces with a rate to show.
 */
export class WorkspaceThroughput {
    readonly #meters = new Map<string, Meter>();

    constructor(
        private readonly windowSeconds = 3,
        private readonly now = () => performance.now()
    ) {}

    add(workspace: string, count: number): void {
        let meter = this.#meters.get(workspace);
        if (meter === undefined) {
            meter = { buckets: new Map() };
            this.#meters.set(workspace, meter);
        }
        const bucket = Math.floor(this.now() / BUCKET_MS);
        meter.buckets.set(bucket, (meter.buckets.get(bucket) ?? 0) + count);
        this.#prune(meter, bucket);
    }

    /** Workspaces with tokens in the window, most tokens per second first. */
    rates(): { workspace: string; tokensPerSecond: number }[] {
        const nowMs = this.now();
        const current = Math.floor(nowMs / BUCKET_MS);
        const rates: { workspace: string; tokensPerSecond: number }[] = [];
        for (const [workspace, meter] of this.#meters) {
            this.#prune(meter, current);
            if (meter.buckets.size === 0) {
                this.#meters.delete(workspace);
                continue;
            }
            const first = Math.min(...meter.buckets.keys());
            let tokens = 0;
            for (const count of meter.buckets.values()) {
                tokens += count;
            }
            const spanMs = Math.min(this.windowSeconds * 1000, Math.max(BUCKET_MS, nowMs - first * BUCKET_MS));
            rates.push({ workspace, tokensPerSecond: Math.round((tokens * 10_000) / spanMs) / 10 });
        }
        return rates.sort((a, b) => b.tokensPerSecond - a.tokensPerSecond || a.workspace.localeCompare(b.workspace));
    }

    /** Forgets the buckets that ended before the window that ends with bucket `current`. */
    #prune(meter: Meter, current: number): void {
        const oldest = current - (this.windowSeconds * 1000) / BUCKET_MS + 1;
        for (const bucket of meter.buckets.keys()) {
            if (bucket < oldest) {
                meter.buckets.delete(bucket);
            }
        }
    }
}
