/** Events per second over a sliding window (default 3 s), in one-second buckets. */
export class ThroughputMeter {
    readonly #buckets = new Map<number, number>();

    constructor(
        private readonly windowSeconds = 3,
        private readonly now = () => performance.now()
    ) {}

    add(count: number): void {
        const second = Math.floor(this.now() / 1000);
        this.#buckets.set(second, (this.#buckets.get(second) ?? 0) + count);
        for (const key of this.#buckets.keys()) {
            if (key <= second - this.windowSeconds) {
                this.#buckets.delete(key);
            }
        }
    }

    perSecond(): number {
        const second = Math.floor(this.now() / 1000);
        let total = 0;
        for (const [key, count] of this.#buckets) {
            if (key > second - this.windowSeconds && key < second) {
                total += count;
            }
        }
        return total / (this.windowSeconds - 1);
    }
}
