import os from "node:os";
import { randomFillSync } from "node:crypto";
import { requestId, workspaceId } from "../../engine/core/ids.js";
import { MAX_HASH_WORKERS } from "../../engine/pages/PageHasher.js";
import { PagePool } from "../../engine/pages/PagePool.js";
import type { Reservation } from "../../engine/pages/Reservation.js";
import { headDimension, modelPresets } from "../../synthetic/model/modelPresets.js";
import { formatBytes, formatNumber, median, printTable, type Benchmark, type BenchFigures } from "./benchUtils.js";

/** The handoff bench's longest prompt: 8,192 tokens of small's KV in pages of 256 tokens. */
const PAGE_TOKENS = 256;
const NUM_PAGES = 32;
const NUM_REPETITIONS = Number(process.env.KVAULT_BENCH_REPETITIONS ?? 7);

type Arm = "page by page on the thread" | "batched, off the thread";
const ARMS: readonly Arm[] = ["page by page on the thread", "batched, off the thread"];

interface Sample {
    readonly sealMs: number;
    readonly verifyMs: number;
    /** The longest the event loop went without a turn while the seal and verify ran (ms). */
    readonly longestBlockMs: number;
}

/** Times `work` and the longest stretch the event loop went without a turn meanwhile. */
async function timed(work: () => Promise<void>): Promise<{ ms: number; longestBlockMs: number }> {
    let longestBlockMs = 0;
    let lastTurnAt = performance.now();
    let running = true;
    const tick = (): void => {
        const now = performance.now();
        longestBlockMs = Math.max(longestBlockMs, now - lastTurnAt);
        lastTurnAt = now;
        if (running) {
            setImmediate(tick);
        }
    };
    setImmediate(tick);
    const startedAt = performance.now();
    await work();
    const ms = performance.now() - startedAt;
    running = false;
    longestBlockMs = Math.max(longestBlockMs, performance.now() - lastTurnAt);
    return { ms, longestBlockMs };
}

async function runArm(pool: PagePool, source: Buffer, arm: Arm, repetition: number): Promise<Sample> {
    const reservation: Reservation = pool.reserve({
        workspace: workspaceId("bench"),
        holder: requestId(`seal-verify-${repetition}-${arm}`),
        numPages: NUM_PAGES,
        firstToken: 0
    });
    try {
        const { pageBytes } = pool.config;
        for (const [index, handle] of reservation.pages.entries()) {
            const leased = pool.acquireWriteLease(handle.pageId, handle.generation);
            if (!leased.ok) {
                throw leased.error;
            }
            leased.lease.write(0, source.subarray(index * pageBytes, (index + 1) * pageBytes));
            leased.lease.release();
        }
        const pages = reservation.pages.map((handle) => handle.pageId);
        const { generation } = reservation;
        const seal =
            arm === "batched, off the thread"
                ? async () => {
                      const sealed = await pool.sealPages(
                          pages.map((pageId) => ({ pageId, numTokens: PAGE_TOKENS })),
                          generation
                      );
                      if (!sealed.ok) {
                          throw sealed.error;
                      }
                  }
                : () => {
                      for (const page of pages) {
                          const sealed = pool.seal(page, generation);
                          if (!sealed.ok) {
                              throw sealed.error;
                          }
                      }
                      return Promise.resolve();
                  };
        const verify =
            arm === "batched, off the thread"
                ? async () => {
                      const verified = await pool.verifyPages(pages, generation);
                      if (!verified.ok) {
                          throw verified.error;
                      }
                  }
                : () => {
                      for (const page of pages) {
                          const verified = pool.verify(page, generation);
                          if (!verified.ok) {
                              throw verified.error;
                          }
                      }
                      return Promise.resolve();
                  };
        const sealed = await timed(seal);
        const verified = await timed(verify);
        return { sealMs: sealed.ms, verifyMs: verified.ms, longestBlockMs: Math.max(sealed.longestBlockMs, verified.longestBlockMs) };
    } finally {
        pool.release(reservation);
    }
}

export const sealVerifyBench: Benchmark = {
    name: "sealverify",
    description: "A handoff's seal and verify of 8,192 tokens of small's KV: page by page on the engine's thread against batched off it",
    async run(): Promise<BenchFigures> {
        const preset = modelPresets.small;
        const pageBytes = PAGE_TOKENS * preset.numLayers * 2 * preset.numKvHeads * headDimension(preset) * 2;
        const pool = new PagePool({ numPages: NUM_PAGES, pageTokens: PAGE_TOKENS, pageBytes });
        const source = randomFillSync(Buffer.allocUnsafeSlow(NUM_PAGES * pageBytes));
        const totalBytes = NUM_PAGES * pageBytes;
        try {
            await runArm(pool, source, ARMS[1]!, -1); // starts the hashing threads, not measured
            const samples = new Map<Arm, Sample[]>(ARMS.map((arm) => [arm, []]));
            for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
                for (const arm of repetition % 2 === 0 ? ARMS : [...ARMS].reverse()) {
                    samples.get(arm)!.push(await runArm(pool, source, arm, repetition));
                }
            }
            const rows = ARMS.map((arm) => {
                const runs = samples.get(arm)!;
                const sealMs = median(runs.map((run) => run.sealMs));
                const verifyMs = median(runs.map((run) => run.verifyMs));
                return {
                    arm,
                    sealMs,
                    verifyMs,
                    longestBlockMs: median(runs.map((run) => run.longestBlockMs)),
                    sealVerifyGBps: totalBytes / ((sealMs + verifyMs) * 1e6)
                };
            });
            const [inline, offThread] = rows as [(typeof rows)[0], (typeof rows)[0]];
            printTable(
                `Seal and verify of ${NUM_PAGES} pages × ${formatBytes(pageBytes)} = ${formatBytes(totalBytes)} ` +
                    `(median of ${NUM_REPETITIONS}, interleaved; ${Math.min(MAX_HASH_WORKERS, os.availableParallelism())} hashing threads)`,
                [
                    { header: "arm", cell: (r: (typeof rows)[0]) => r.arm, align: "left" },
                    { header: "seal", cell: (r) => `${formatNumber(r.sealMs, 1)} ms` },
                    { header: "verify", cell: (r) => `${formatNumber(r.verifyMs, 1)} ms` },
                    { header: "seal + verify", cell: (r) => `${formatNumber(r.sealVerifyGBps, 2)} GB/s` },
                    { header: "longest event-loop block", cell: (r) => `${formatNumber(r.longestBlockMs, 1)} ms` }
                ],
                rows
            );
            const speedup = (inline.sealMs + inline.verifyMs) / (offThread.sealMs + offThread.verifyMs);
            console.log(`off the thread ÷ on it: ${formatNumber(speedup, 2)}× the rate; load average ${os.loadavg()[0]!.toFixed(2)}`);
            return { pageBytes, numPages: NUM_PAGES, numRepetitions: NUM_REPETITIONS, unit: "ms, GB/s", rows, speedup };
        } finally {
            pool.dispose();
        }
    }
};
