import os from "node:os";

/** One benchmark: `run` prints its own tables and returns the figures that go into the JSON file. */
export interface Benchmark {
    /** What `npm run bench -- <filter>` matches (a substring of the name). */
    readonly name: string;
    readonly description: string;
    /** Run only when a filter names it (`npm run bench -- gpu`), never in a plain `npm run bench`. */
    readonly explicitOnly?: boolean;
    run(): Promise<BenchFigures>;
}

export type BenchFigures = Record<string, unknown>;

/** A benchmark that cannot run on this machine (no GPU, …): reported with its reason, no stack trace. */
export class BenchmarkRefusedError extends Error {
    override readonly name = "BenchmarkRefusedError";
    readonly code = "benchmark_refused";
}

export interface Column<Row> {
    readonly header: string;
    /** The cell's text, units included. */
    readonly cell: (row: Row) => string;
    readonly align?: "left" | "right";
}

export function median(values: readonly number[]): number {
    if (values.length === 0) {
        throw new RangeError("median of no values");
    }
    const sorted = [...values].sort((a, b) => a - b);
    const middle = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Nearest-rank percentile (0 < p ≤ 100): the smallest value with at least p % of the values at or below it. */
export function percentile(values: readonly number[], p: number): number {
    if (values.length === 0) {
        throw new RangeError("percentile of no values");
    }
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
}

/**
 * When each generated token reached the caller (ms, `performance.now()`), from the moment the
 * request was made: the clock every streaming benchmark reads its rates from.
 */
export class TokenClock {
    readonly startedAt = performance.now();
    readonly tokens: number[] = [];
    readonly arrivals: number[] = [];

    onToken(token: number): void {
        this.arrivals.push(performance.now());
        this.tokens.push(token);
    }

    /** From the request to the first token, ms; NaN before it. */
    get timeToFirstTokenMs(): number {
        return (this.arrivals[0] ?? Number.NaN) - this.startedAt;
    }

    /** Tokens after the first, per second from the first to the last; 0 with fewer than two. */
    get decodeTokensPerSecond(): number {
        const numTokens = this.tokens.length;
        return numTokens > 1 ? (numTokens - 1) / ((this.arrivals[numTokens - 1]! - this.arrivals[0]!) / 1000) : 0;
    }
}

/** Runs `fn` `numRepetitions` times after `numWarmups` unmeasured runs; the durations in ms. */
export function timeRepeated(numWarmups: number, numRepetitions: number, fn: () => void): number[] {
    for (let i = 0; i < numWarmups; i++) {
        fn();
    }
    const durations: number[] = [];
    for (let i = 0; i < numRepetitions; i++) {
        const startedAt = performance.now();
        fn();
        durations.push(performance.now() - startedAt);
    }
    return durations;
}

/** Decimal gigabytes per second (10⁹ bytes/s) for `numBytes` moved in `ms` milliseconds. */
export function gigabytesPerSecond(numBytes: number, ms: number): number {
    return numBytes / (ms * 1e6);
}

export function formatNumber(value: number, fractionDigits = 1): string {
    return value.toLocaleString("en-US", { minimumFractionDigits: fractionDigits, maximumFractionDigits: fractionDigits });
}

/** Binary units: 3,145,728 → "3 MiB", 8,192 → "8 KiB". */
export function formatBytes(numBytes: number): string {
    const units = ["B", "KiB", "MiB", "GiB"];
    let value = numBytes;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
        value /= 1024;
        unit++;
    }
    return `${Number.isInteger(value) ? value : formatNumber(value, 1)} ${units[unit]}`;
}

export function formatTable<Row>(title: string, columns: readonly Column<Row>[], rows: readonly Row[]): string {
    const cells = rows.map((row) => columns.map((column) => column.cell(row)));
    const widths = columns.map((column, index) => Math.max(column.header.length, ...cells.map((line) => line[index]!.length)));
    const pad = (text: string, index: number): string =>
        columns[index]!.align === "left" ? text.padEnd(widths[index]!) : text.padStart(widths[index]!);
    const lines = [
        title,
        columns.map((column, index) => pad(column.header, index)).join(" | "),
        widths.map((width) => "-".repeat(width)).join("-|-"),
        ...cells.map((line) => line.map(pad).join(" | "))
    ];
    return lines.join("\n");
}

export function printTable<Row>(title: string, columns: readonly Column<Row>[], rows: readonly Row[]): void {
    console.log(`\n${formatTable(title, columns, rows)}`);
}

export function machineDescription(): Record<string, unknown> {
    return {
        node: process.version,
        platform: `${os.platform()} ${os.arch()}`,
        cpu: os.cpus()[0]?.model ?? "unknown",
        numLogicalCpus: os.cpus().length,
        availableParallelism: os.availableParallelism(),
        totalMemoryBytes: os.totalmem()
    };
}
