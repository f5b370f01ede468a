import { randomFillSync } from "node:crypto";
import { requestId, workspaceId } from "../../engine/core/ids.js";
import { modelPresets, headDimension, type ModelPreset } from "../../synthetic/model/modelPresets.js";
import { pageChecksum } from "../../engine/pages/pageChecksum.js";
import { PagePool } from "../../engine/pages/PagePool.js";
import { engineDefaults } from "../../engine/EngineConfig.js";
import {
    formatBytes,
    formatNumber,
    gigabytesPerSecond,
    median,
    printTable,
    timeRepeated,
    type Benchmark,
    type BenchFigures
} from "./benchUtils.js";

/** Passes over the arena in one timed repetition: at least this many bytes, so a repetition lasts milliseconds. */
const MIN_BYTES_PER_REPETITION = 256 * 1024 ** 2;
/** The arena of one case: the engine's default page count, capped so the 3 MiB case stays at a few hundred MiB. */
const MAX_ARENA_BYTES = 256 * 1024 ** 2;
const NUM_WARMUPS = 3;
const NUM_REPETITIONS = 9;

interface PageCase {
    readonly label: string;
    readonly pageTokens: number;
    readonly pageBytes: number;
}

/** K and V of every layer, F16 (2 bytes an element): what a page holds per token for a generated preset. */
function f16BytesPerToken(preset: ModelPreset): number {
    return preset.numLayers * 2 * preset.numKvHeads * headDimension(preset) * 2;
}

function pageOf(preset: "small" | "tiny", pageTokens: number): PageCase {
    const perToken = f16BytesPerToken(modelPresets[preset]);
    return {
        label: `${preset}: ${pageTokens} tok × ${formatBytes(perToken)}/tok = ${formatBytes(pageTokens * perToken)}`,
        pageTokens,
        pageBytes: pageTokens * perToken
    };
}

const cases: readonly PageCase[] = [pageOf("small", 256), pageOf("tiny", 16), { label: "64 KiB", pageTokens: 64, pageBytes: 64 * 1024 }];

interface CaseResult {
    readonly label: string;
    readonly pageBytes: number;
    readonly numPages: number;
    readonly arenaBytes: number;
    /** Median GB/s (10⁹ bytes/s) of page bytes processed. */
    readonly fillGBps: number;
    readonly memcpyGBps: number;
    readonly checksumGBps: number;
    readonly scrubPlusChecksumGBps: number;
    /** reserve → write lease → write → seal (checksum) → release (scrub), through the real PagePool. */
    readonly poolCycleGBps: number;
    readonly scrubPlusChecksumToMemcpy: number;
    readonly poolCycleToMemcpy: number;
    /** Page bytes per second of what the pool cycle adds beyond its one memcpy: (pool cycle time − memcpy time) per page. */
    readonly poolAddedGBps: number;
    readonly poolAddedToMemcpy: number;
    /** Median µs per page for scrub plus checksum, and for a full pool cycle. */
    readonly scrubPlusChecksumUsPerPage: number;
    readonly poolCycleUsPerPage: number;
}

function measureCase(pageCase: PageCase): CaseResult {
    const { pageBytes, pageTokens } = pageCase;
    const numPages = Math.max(1, Math.min(engineDefaults.numPages, Math.floor(MAX_ARENA_BYTES / pageBytes)));
    const arenaBytes = numPages * pageBytes;
    const numPasses = Math.max(1, Math.ceil(MIN_BYTES_PER_REPETITION / arenaBytes));
    const bytesPerRepetition = numPasses * arenaBytes;

    const arena = Buffer.from(new ArrayBuffer(arenaBytes));
    const source = Buffer.from(new ArrayBuffer(arenaBytes));
    randomFillSync(source);
    source.copy(arena);

    const overPages = (perPage: (start: number, end: number, page: number) => void) => (): void => {
        for (let pass = 0; pass < numPasses; pass++) {
            for (let page = 0; page < numPages; page++) {
                perPage(page * pageBytes, (page + 1) * pageBytes, page);
            }
        }
    };
    const gbps = (durations: number[]): number => gigabytesPerSecond(bytesPerRepetition, median(durations));

    const fillGBps = gbps(
        timeRepeated(
            NUM_WARMUPS,
            NUM_REPETITIONS,
            overPages((start, end) => {
                arena.fill(0, start, end);
            })
        )
    );
    const memcpyGBps = gbps(
        timeRepeated(
            NUM_WARMUPS,
            NUM_REPETITIONS,
            overPages((start, end) => {
                source.copy(arena, start, start, end);
            })
        )
    );
    source.copy(arena);
    const checksumGBps = gbps(
        timeRepeated(
            NUM_WARMUPS,
            NUM_REPETITIONS,
            overPages((start, end, page) => {
                pageChecksum(arena.subarray(start, end), page * pageTokens);
            })
        )
    );
    // What the pool does to each page in its life besides the write: checksum at seal, zero at release.
    const scrubPlusChecksumGBps = gbps(
        timeRepeated(
            NUM_WARMUPS,
            NUM_REPETITIONS,
            overPages((start, end, page) => {
                pageChecksum(arena.subarray(start, end), page * pageTokens);
                arena.fill(0, start, end);
            })
        )
    );

    const poolCycleGBps = measurePoolCycle(pageCase, numPages, numPasses, source);
    const poolAddedGBps = 1 / (1 / poolCycleGBps - 1 / memcpyGBps);
    return {
        label: pageCase.label,
        pageBytes,
        numPages,
        arenaBytes,
        fillGBps,
        memcpyGBps,
        checksumGBps,
        scrubPlusChecksumGBps,
        poolCycleGBps,
        scrubPlusChecksumToMemcpy: scrubPlusChecksumGBps / memcpyGBps,
        poolCycleToMemcpy: poolCycleGBps / memcpyGBps,
        poolAddedGBps,
        poolAddedToMemcpy: poolAddedGBps / memcpyGBps,
        scrubPlusChecksumUsPerPage: pageBytes / (scrubPlusChecksumGBps * 1e3),
        poolCycleUsPerPage: pageBytes / (poolCycleGBps * 1e3)
    };
}

/** GB/s of page bytes through the real pool: every page of the arena reserved, written, sealed and released per pass. */
function measurePoolCycle(pageCase: PageCase, numPages: number, numPasses: number, source: Buffer): number {
    const { pageBytes, pageTokens } = pageCase;
    const pool = new PagePool({ numPages, pageTokens, pageBytes });
    const workspace = workspaceId("bench");
    let nextRequest = 0;
    try {
        const cycle = (): void => {
            for (let pass = 0; pass < numPasses; pass++) {
                const reservation = pool.reserve({ workspace, holder: requestId(`bench-${nextRequest++}`), numPages, firstToken: 0 });
                for (const [index, handle] of reservation.pages.entries()) {
                    const leased = pool.acquireWriteLease(handle.pageId, handle.generation);
                    if (!leased.ok) {
                        throw leased.error;
                    }
                    const written = leased.lease.write(0, source.subarray(index * pageBytes, (index + 1) * pageBytes));
                    leased.lease.release();
                    if (!written.ok) {
                        throw written.error;
                    }
                    const sealed = pool.seal(handle.pageId, handle.generation);
                    if (!sealed.ok) {
                        throw sealed.error;
                    }
                }
                const released = pool.release(reservation);
                if (!released.ok || released.numPagesScrubbed !== numPages) {
                    throw new Error(`pool release scrubbed ${released.ok ? released.numPagesScrubbed : "no"} pages of ${numPages}`);
                }
            }
        };
        const durations = timeRepeated(NUM_WARMUPS, NUM_REPETITIONS, cycle);
        // Outside the timed loop: every page is free again and verifiably zero (I6).
        const audit = pool.audit({ scanFreePages: true });
        if (!audit.ok || pool.numFreePages !== numPages) {
            throw new Error(`the pool's audit failed after the benchmark: ${JSON.stringify(audit.violations.slice(0, 3))}`);
        }
        return gigabytesPerSecond(numPasses * numPages * pageBytes, median(durations));
    } finally {
        pool.dispose();
    }
}

export const scrubChecksumBench: Benchmark = {
    name: "scrub",
    description:
        "Scrub (Buffer.fill(0)) plus page checksum (pageChecksum, xxh64) per page, against fill and memcpy, and the PagePool end to end",
    async run(): Promise<BenchFigures> {
        const results = cases.map(measureCase);
        const gb = (value: number): string => `${formatNumber(value, 1)} GB/s`;
        printTable(
            "Per-page throughput (median of 9; GB/s = 10⁹ bytes/s of page bytes)",
            [
                { header: "page", cell: (r: CaseResult) => r.label, align: "left" },
                { header: "arena", cell: (r) => `${r.numPages} pages, ${formatBytes(r.arenaBytes)}` },
                { header: "fill(0)", cell: (r) => gb(r.fillGBps) },
                { header: "memcpy", cell: (r) => gb(r.memcpyGBps) },
                { header: "checksum", cell: (r) => gb(r.checksumGBps) },
                { header: "scrub+checksum", cell: (r) => gb(r.scrubPlusChecksumGBps) },
                { header: "÷ memcpy", cell: (r) => `${formatNumber(r.scrubPlusChecksumToMemcpy, 2)}×` },
                { header: "pool cycle", cell: (r) => gb(r.poolCycleGBps) },
                { header: "÷ memcpy", cell: (r) => `${formatNumber(r.poolCycleToMemcpy, 2)}×` },
                { header: "pool cycle − memcpy", cell: (r) => (r.poolAddedGBps > 0 ? gb(r.poolAddedGBps) : "within noise") },
                { header: "÷ memcpy", cell: (r) => (r.poolAddedGBps > 0 ? `${formatNumber(r.poolAddedToMemcpy, 2)}×` : "—") }
            ],
            results
        );
        printTable(
            "Per-page time (median)",
            [
                { header: "page", cell: (r: CaseResult) => formatBytes(r.pageBytes), align: "left" },
                { header: "scrub+checksum", cell: (r) => `${formatNumber(r.scrubPlusChecksumUsPerPage, 2)} µs` },
                { header: "pool cycle (write+seal+release)", cell: (r) => `${formatNumber(r.poolCycleUsPerPage, 2)} µs` }
            ],
            results
        );
        console.log(
            "scrub+checksum: pageChecksum() then Buffer.fill(0) over each page. pool cycle: reserve all pages, " +
                "write each through a write lease (a memcpy), seal (checksum), release (scrub). " +
                "pool cycle − memcpy: the rate of what the pool adds beyond the copy it must do anyway. Aim: scrub+checksum ≥ 0.5× memcpy."
        );
        return { unit: "GB/s (1e9 bytes/s)", numRepetitions: NUM_REPETITIONS, cases: results };
    }
};
