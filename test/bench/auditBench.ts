import type { AuditSummary } from "../../contract/isolation.js";
import { PeriodicAudit } from "../../engine/audit/PeriodicAudit.js";
import { runSlicedAudit, type SlicedAuditResult } from "../../engine/audit/runSlicedAudit.js";
import { workspaceId } from "../../engine/core/ids.js";
import { KvEngine } from "../../engine/KvEngine.js";
import { LlamaRuntime } from "../../engine/runtime/LlamaRuntime.js";
import { ensureGeneratedModel } from "../support/generatedModels.js";
import { BENCH_GPU, BENCH_THREADS, benchEngineConfig, promptTokensOfLength, repetitionsFromEnvironment } from "./benchPrompt.js";
import { formatBytes, formatNumber, median, percentile, printTable, type Benchmark, type BenchFigures } from "./benchUtils.js";

/** The pool: 65,536 pages. One token a page, so the small model's 12 KiB a token make a 768 MiB arena (past the old 256 MiB scan limit). */
const NUM_PAGES = 65_536;
const PAGE_TOKENS = 1;
const CONTEXT_SIZE = 1_024;
const STREAM_PROMPT_TOKENS = 64;
/** Tokens the measured workspace streams per run: several audits' worth at the small model's rate on 2 cores. */
const STREAM_TOKENS = 600;
/** Two more workspaces of this many tokens; on two decode sequences one or both wait in sealed pages, which the byte scan re-checksums. */
const PARKED_PROMPT_TOKENS = 512;
const AUDIT_INTERVAL_MS = 1_000;
/** 1 by default (600 gaps and a few audits per run on a noisy machine). */
const NUM_REPETITIONS = repetitionsFromEnvironment(1);

/** How the audit runs during a stream; `undefined` for none. */
interface Mode {
    readonly name: string;
    readonly audit?: (engine: KvEngine) => Promise<AuditCostSample>;
}

/** One audit's cost; times in ms, `longestPauseMs` the longest the thread was held at once. */
interface AuditCostSample {
    readonly numPagesChecked: number;
    readonly numPagesScanned: number;
    readonly metadataMs: number;
    readonly byteScanMs: number;
    readonly longestPauseMs: number;
    readonly wallMs: number;
    readonly numSlices: number;
    readonly ok: boolean;
}

function fromSliced(result: SlicedAuditResult): AuditCostSample {
    return {
        numPagesChecked: result.numPagesChecked,
        numPagesScanned: result.numFreePagesScanned + result.numSealedPagesVerified,
        metadataMs: result.cost.metadataMs,
        byteScanMs: result.cost.byteScanMs,
        longestPauseMs: result.cost.longestPauseMs,
        wallMs: result.durationMs,
        numSlices: result.cost.numSlices,
        ok: result.ok
    };
}

const MODES: readonly Mode[] = [
    { name: "no audit" },
    { name: "metadata (I1–I5), every 1 s", audit: async (engine) => fromSliced(await runSlicedAudit(engine, { byteScans: false })) },
    { name: "full, byte scans sliced, every 1 s", audit: async (engine) => fromSliced(await runSlicedAudit(engine)) },
    {
        // What the audit was before, had it scanned a pool this large at all: every byte in one synchronous step.
        name: "full, byte scans in one step, every 1 s",
        audit: async (engine) => {
            const startedAt = performance.now();
            const result = engine.audit({ scanFreePages: true, verifySealedPages: true });
            const wallMs = performance.now() - startedAt;
            return {
                numPagesChecked: result.numPagesChecked,
                numPagesScanned: result.numFreePagesScanned + result.numSealedPagesVerified,
                metadataMs: Number.NaN,
                byteScanMs: Number.NaN,
                longestPauseMs: wallMs,
                wallMs,
                numSlices: 1,
                ok: result.ok
            };
        }
    }
];

interface RunSample {
    readonly gapsMs: readonly number[];
    /** Gaps that overlap an audit (from its start to its end). */
    readonly gapsDuringAuditMs: readonly number[];
    readonly audits: readonly AuditCostSample[];
}

let nextWorkspace = 0;

/** Streams STREAM_TOKENS in a fresh workspace while `mode`'s audit runs every second; the gaps between tokens. */
async function streamOnce(engine: KvEngine, prompt: readonly number[], mode: Mode): Promise<RunSample> {
    const workspace = workspaceId(`bench-audit-${nextWorkspace++}`);
    const windows: [number, number][] = [];
    const audits: AuditCostSample[] = [];
    const periodic =
        mode.audit === undefined
            ? undefined
            : new PeriodicAudit(async (): Promise<AuditSummary> => {
                  const startedAt = performance.now();
                  const sample = await mode.audit!(engine);
                  windows.push([startedAt, performance.now()]);
                  audits.push(sample);
                  return {
                      ok: sample.ok,
                      violations: [],
                      numViolations: 0,
                      numPagesChecked: sample.numPagesChecked,
                      numSealedPagesVerified: 0,
                      numFreePagesScanned: 0,
                      durationMs: sample.wallMs,
                      at: startedAt
                  };
              }, AUDIT_INTERVAL_MS);
    const arrivals: number[] = [];
    periodic?.start();
    try {
        await engine.generate({
            workspace,
            promptTokens: prompt,
            maxTokens: STREAM_TOKENS,
            onToken: () => void arrivals.push(performance.now())
        });
    } finally {
        await periodic?.stop();
        await engine.forgetWorkspace(workspace);
    }
    const gapsMs: number[] = [];
    const gapsDuringAuditMs: number[] = [];
    for (let index = 1; index < arrivals.length; index++) {
        const [from, to] = [arrivals[index - 1]!, arrivals[index]!];
        gapsMs.push(to - from);
        if (windows.some(([start, end]) => start < to && end > from)) {
            gapsDuringAuditMs.push(to - from);
        }
    }
    if (audits.some((audit) => !audit.ok)) {
        throw new Error(`an audit found violations during the "${mode.name}" run`);
    }
    return { gapsMs, gapsDuringAuditMs, audits };
}

interface ModeResult {
    readonly mode: string;
    readonly itlP50Ms: number;
    readonly itlP99Ms: number;
    readonly itlMaxMs: number;
    readonly numGaps: number;
    /** The largest gap that overlapped an audit. */
    readonly maxGapDuringAuditMs: number;
    readonly numAudits: number;
    /** Medians over the run's audits. */
    readonly auditWallMs: number;
    readonly longestPauseMs: number;
    readonly metadataUsPerPage: number;
    readonly byteScanUsPerPage: number;
    readonly numSlices: number;
    readonly numPagesScanned: number;
}

function summarize(mode: Mode, samples: readonly RunSample[]): ModeResult {
    const gaps = samples.flatMap((sample) => sample.gapsMs);
    const during = samples.flatMap((sample) => sample.gapsDuringAuditMs);
    const audits = samples.flatMap((sample) => sample.audits);
    const med = (values: readonly number[]): number => (values.length === 0 || values.some(Number.isNaN) ? Number.NaN : median(values));
    return {
        mode: mode.name,
        itlP50Ms: percentile(gaps, 50),
        itlP99Ms: percentile(gaps, 99),
        itlMaxMs: Math.max(...gaps),
        numGaps: gaps.length,
        maxGapDuringAuditMs: during.length === 0 ? Number.NaN : Math.max(...during),
        numAudits: audits.length,
        auditWallMs: med(audits.map((audit) => audit.wallMs)),
        longestPauseMs: audits.length === 0 ? Number.NaN : Math.max(...audits.map((audit) => audit.longestPauseMs)),
        metadataUsPerPage: med(audits.map((audit) => (audit.metadataMs * 1_000) / audit.numPagesChecked)),
        byteScanUsPerPage: med(
            audits.filter((audit) => audit.numPagesScanned > 0).map((audit) => (audit.byteScanMs * 1_000) / audit.numPagesScanned)
        ),
        numSlices: med(audits.map((audit) => audit.numSlices)),
        numPagesScanned: med(audits.map((audit) => audit.numPagesScanned))
    };
}

export const auditBench: Benchmark = {
    name: "audit",
    description:
        "Inter-token latency of a streaming workspace with the audit every second over a 65,536-page pool (768 MiB): none, metadata only, byte scans sliced, byte scans in one step; the audit's cost per page",
    async run(): Promise<BenchFigures> {
        const modelPath = ensureGeneratedModel("small");
        const runtime = await LlamaRuntime.start({ gpu: BENCH_GPU, maxThreads: BENCH_THREADS });
        try {
            const engine = await KvEngine.start(
                benchEngineConfig(modelPath, CONTEXT_SIZE, PAGE_TOKENS, { numDecodeSequences: 2, numPages: NUM_PAGES }),
                { runtime }
            );
            try {
                const arenaBytes = NUM_PAGES * engine.pool.config.pageBytes;
                console.log(
                    `runtime: ${runtime.describe()}; ${NUM_PAGES.toLocaleString("en-US")} pages of ${PAGE_TOKENS} token × ${formatBytes(engine.pool.config.pageBytes)} = ${formatBytes(arenaBytes)}; ` +
                        `stream: ${STREAM_PROMPT_TOKENS}-token prompt, ${STREAM_TOKENS} tokens; audit every ${AUDIT_INTERVAL_MS} ms`
                );
                const tokenize = (text: string): readonly number[] => engine.tokenize(text);
                for (const name of ["parked-1", "parked-2"]) {
                    // their KV ends up in sealed pages once the streams take the sequences
                    await engine.generate({
                        workspace: workspaceId(`bench-audit-${name}`),
                        promptTokens: promptTokensOfLength(tokenize, PARKED_PROMPT_TOKENS),
                        maxTokens: 4
                    });
                }
                const prompt = promptTokensOfLength(tokenize, STREAM_PROMPT_TOKENS);
                await streamOnce(engine, prompt.slice(0, 16), MODES[0]!); // warm-up: the parked workspaces move into pages

                const results: ModeResult[] = [];
                for (const mode of MODES) {
                    const samples: RunSample[] = [];
                    for (let repetition = 0; repetition < NUM_REPETITIONS; repetition++) {
                        const sample = await streamOnce(engine, prompt, mode);
                        samples.push(sample);
                        console.log(
                            `  ${mode.name}, repetition ${repetition + 1}/${NUM_REPETITIONS}: ITL p50 ${formatNumber(percentile(sample.gapsMs, 50), 1)} ms, ` +
                                `max ${formatNumber(Math.max(...sample.gapsMs), 1)} ms; ${sample.audits.length} audits`
                        );
                    }
                    results.push(summarize(mode, samples));
                }

                const ms = (value: number): string => (Number.isNaN(value) ? "—" : `${formatNumber(value, value < 10 ? 2 : 1)} ms`);
                const us = (value: number): string => (Number.isNaN(value) ? "—" : `${formatNumber(value, value < 0.1 ? 4 : 3)} µs`);
                printTable(
                    `Stream ITL with the audit every ${AUDIT_INTERVAL_MS / 1_000} s, ${NUM_PAGES.toLocaleString("en-US")} pages (${formatBytes(arenaBytes)}), small model (${NUM_REPETITIONS} run(s) each, ${runtime.describe()})`,
                    [
                        { header: "audit", cell: (r: ModeResult) => r.mode, align: "left" },
                        { header: "ITL p50", cell: (r) => ms(r.itlP50Ms) },
                        { header: "p99", cell: (r) => ms(r.itlP99Ms) },
                        { header: "max", cell: (r) => ms(r.itlMaxMs) },
                        { header: "max gap in an audit", cell: (r) => ms(r.maxGapDuringAuditMs) },
                        { header: "audits", cell: (r) => `${r.numAudits}` },
                        { header: "audit wall", cell: (r) => ms(r.auditWallMs) },
                        { header: "longest pause", cell: (r) => ms(r.longestPauseMs) },
                        { header: "slices", cell: (r) => (Number.isNaN(r.numSlices) ? "—" : formatNumber(r.numSlices, 0)) },
                        { header: "metadata / page", cell: (r) => us(r.metadataUsPerPage) },
                        { header: "byte scan / page", cell: (r) => us(r.byteScanUsPerPage) }
                    ],
                    results
                );
                console.log(
                    "ITL: gaps between the stream's consecutive tokens (KvEngine.generate's onToken), one stream at a time, while the audit runs every second " +
                        "(the next starts a second after the last ended). \"max gap in an audit\": the largest gap overlapping an audit's run. Per page: the audit's thread time " +
                        "over pages checked (metadata) or scanned (free pages for zeros, sealed pages re-checksummed); medians over a run's audits. Longest pause: the longest the " +
                        "audit held the event loop at once (the metadata pass or one slice; the whole audit in one step)."
                );
                return {
                    backend: runtime.describe(),
                    threads: BENCH_THREADS,
                    numPages: NUM_PAGES,
                    pageBytes: engine.pool.config.pageBytes,
                    arenaBytes,
                    streamTokens: STREAM_TOKENS,
                    auditIntervalMs: AUDIT_INTERVAL_MS,
                    numRepetitions: NUM_REPETITIONS,
                    unit: "ms (ITL, pauses), µs (per page)",
                    results
                };
            } finally {
                await engine.dispose();
            }
        } finally {
            await runtime.dispose();
        }
    }
};
